// SPDX-License-Identifier: Apache-2.0
// Owns the hand-over from the CRDT store's Transform change feed to the TransformSystem, and
// to the interpolated presentation when it is on: every merge notes where the feed stood
// before it, so the entities it changed are known per call (timed batch or untimed change).
#include "scenecrdt/runtime/runtime.h"

#include <algorithm>

#include "scenecrdt/runtime/transform/interpolation/interpolation_presentation.h"

namespace scenecrdt::runtime {
namespace {

bool ValidTime(int64_t us) { return us >= -kMaxTimeUs && us <= kMaxTimeUs; }

}  // namespace

Runtime::Runtime(StoreLimits limits) : store_(limits) {
  store_.set_track_transform_changes(true);
  store_.set_track_component_changes(true);
}
Runtime::~Runtime() = default;
Runtime::Runtime(Runtime&&) noexcept = default;
Runtime& Runtime::operator=(Runtime&&) noexcept = default;

void Runtime::NoteUntimedChanges(std::size_t before) {
  if (presentation_ == nullptr) return;
  const std::span<const EntityId> feed = store_.transform_changes();
  presentation_->OnImmediate(feed.subspan(std::min(before, feed.size())), store_);
}

Result<MergeStats> Runtime::ApplyCrdt(std::span<const uint8_t> bytes,
                                      const protocol::DecodeOptions& options) {
  const std::size_t before = store_.transform_changes().size();
  Result<MergeStats> result = store_.MergeStream(bytes, options);
  NoteUntimedChanges(before);
  return result;
}

Result<MergeStats> Runtime::ApplyCrdt(std::span<const uint8_t> bytes, const BatchTime& time,
                                      const protocol::DecodeOptions& options) {
  if (!ValidTime(time.receive_time_us)) {
    return MakeError(ErrorCode::kInvalidArgument, "receive time out of range");
  }
  if (time.sender_time_us != kNoSenderTime && !ValidTime(time.sender_time_us)) {
    return MakeError(ErrorCode::kInvalidArgument, "sender time out of range");
  }
  const std::size_t before = store_.transform_changes().size();
  Result<MergeStats> result = store_.MergeStream(bytes, options);
  if (presentation_ != nullptr) {
    // A stream that fails half-way merged its first messages: they are part of the batch.
    const std::span<const EntityId> feed = store_.transform_changes();
    presentation_->OnBatch(time, feed.subspan(std::min(before, feed.size())), store_);
  }
  return result;
}

MergeResult Runtime::ApplyMessage(const protocol::CrdtMessage& m) {
  const std::size_t before = store_.transform_changes().size();
  const MergeResult result = store_.Merge(m);
  NoteUntimedChanges(before);
  return result;
}

std::size_t Runtime::ForgetEntities(std::span<const EntityId> entities) {
  const std::size_t before = store_.transform_changes().size();
  std::size_t forgotten = 0;
  for (EntityId e : entities) forgotten += store_.ForgetEntity(e) ? 1 : 0;
  NoteUntimedChanges(before);
  return forgotten;
}

Result<MergeOutcome> Runtime::WriteTransform(EntityId e, const protocol::Transform& t,
                                             std::vector<uint8_t>& out) {
  const std::size_t before = store_.transform_changes().size();
  Result<MergeOutcome> result = store_.WriteTransform(e, t, out);
  NoteUntimedChanges(before);
  return result;
}

Result<MergeOutcome> Runtime::WriteComponent(EntityId e, ComponentId c,
                                             std::span<const uint8_t> data,
                                             std::vector<uint8_t>& out) {
  const std::size_t before = store_.transform_changes().size();
  Result<MergeOutcome> result = store_.WriteComponent(e, c, data, out);
  NoteUntimedChanges(before);
  return result;
}

Result<MergeOutcome> Runtime::WriteDeleteComponent(EntityId e, ComponentId c,
                                                   std::vector<uint8_t>& out) {
  const std::size_t before = store_.transform_changes().size();
  Result<MergeOutcome> result = store_.WriteDeleteComponent(e, c, out);
  NoteUntimedChanges(before);
  return result;
}

Result<MergeOutcome> Runtime::WriteDeleteEntity(EntityId e, std::vector<uint8_t>& out) {
  const std::size_t before = store_.transform_changes().size();
  Result<MergeOutcome> result = store_.WriteDeleteEntity(e, out);
  NoteUntimedChanges(before);
  return result;
}

void Runtime::Update(const UpdateOptions& options) {
  added_.clear();
  removed_.clear();
  // The feed may name an entity several times; its current register is what counts, so only
  // the first mention changes anything.
  for (EntityId e : store_.transform_changes()) {
    const bool had = e != protocol::kRootEntity && transforms_.GetTransform(e) != nullptr;
    if (const protocol::Transform* t = store_.FindTransform(e)) {
      transforms_.SetTransform(e, *t);
      if (!had && e != protocol::kRootEntity) added_.push_back(e);
    } else {
      transforms_.RemoveTransform(e);
      if (had) removed_.push_back(e);
    }
  }
  store_.ClearTransformChanges();
  UpdateComponentLists();
  transforms_.Update(options);
}

Result<void> Runtime::EnableInterpolation(const InterpolationOptions& options) {
  Result<void> valid = ValidateInterpolationOptions(options);
  if (!valid.has_value()) return valid;
  if (presentation_ != nullptr) {
    presentation_->set_options(options);
  } else {
    presentation_ = std::make_unique<internal::Presentation>(options, store_);
  }
  return {};
}

void Runtime::DisableInterpolation() { presentation_.reset(); }

Result<void> Runtime::UpdateInterpolated(int64_t render_time_us, const UpdateOptions& options) {
  if (!ValidTime(render_time_us)) {
    return MakeError(ErrorCode::kInvalidArgument, "render time out of range");
  }
  Update(options);
  if (presentation_ != nullptr) presentation_->Update(render_time_us, options);
  return {};
}

TransformSystem& Runtime::interpolated() {
  return presentation_ != nullptr ? presentation_->system() : transforms_;
}

const TransformSystem& Runtime::interpolated() const {
  return presentation_ != nullptr ? presentation_->system() : transforms_;
}

std::span<const EntityId> Runtime::interpolated_added_entities() const {
  return presentation_ != nullptr ? presentation_->added() : std::span<const EntityId>(added_);
}

std::span<const EntityId> Runtime::interpolated_removed_entities() const {
  return presentation_ != nullptr ? presentation_->removed() : std::span<const EntityId>(removed_);
}

InterpolationStats Runtime::interpolation_stats() const {
  return presentation_ != nullptr ? presentation_->stats() : InterpolationStats{};
}

}  // namespace scenecrdt::runtime
