// SPDX-License-Identifier: Apache-2.0
// Exception safety of the C ABI: every allocation a call makes is made to fail in turn (the
// process's operator new is replaced, alloc_failure.h). Nothing may escape or abort: the call
// returns SC_E_NO_MEMORY with a message, a read leaves its handle usable, a change that was cut
// short marks its handle broken (SC_E_BROKEN on every later call), destroy still frees
// everything (LeakSanitizer checks under the asan preset), and a call that needed no failure
// gives the normal result.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenecrdt/scenecrdt.h"
#include "tests/capi/alloc_failure.h"
#include "tests/capi/capi_test_util.h"

namespace scenecrdt::capi_test {
namespace {

constexpr int64_t kMaxAttempts = 20'000;

bool Contains(const char* text, const char* part) {
  return std::string(text).find(part) != std::string::npos;
}

// Every call but destroy refuses a broken handle.
void ExpectBroken(sc_runtime* rt) {
  const uint8_t byte = 0;
  float m[16];
  size_t count = 0;
  char hash[SC_STATE_HASH_CHARS];
  EXPECT_EQ(sc_runtime_apply(rt, &byte, 0), SC_E_BROKEN);
  EXPECT_TRUE(Contains(sc_last_error(), "destroy it")) << sc_last_error();
  EXPECT_EQ(sc_runtime_update(rt), SC_E_BROKEN);
  EXPECT_EQ(sc_runtime_world_matrix(rt, 512, m), SC_E_BROKEN);
  EXPECT_EQ(sc_runtime_copy_world(rt, nullptr, nullptr, 0, &count), SC_E_BROKEN);
  EXPECT_EQ(sc_runtime_state_hash(rt, hash, sizeof(hash)), SC_E_BROKEN);
  EXPECT_EQ(sc_runtime_entity_count(rt), 0u);
  EXPECT_EQ(sc_runtime_enable_interpolation(rt, nullptr), SC_E_BROKEN);
  EXPECT_EQ(sc_runtime_interpolation_enabled(rt), SC_E_BROKEN);
}

// Runs `call` (returning a status) on a fresh handle prepared by `prepare`, with allocation
// number n failing, for n = 0, 1, ... until a run needs no failure; `check` sees that run.
template <class Prepare, class Call, class Check>
void EveryAllocationFails(Prepare prepare, Call call, Check check, bool read_only) {
  int64_t failures = 0;
  for (int64_t n = 0; n < kMaxAttempts; ++n) {
    RuntimePtr rt = MakeRuntime();
    prepare(rt.get());
    FailAllocationsAfter(n);
    const int status = call(rt.get());
    const bool refused = AllocationWasRefused();
    StopFailingAllocations();
    if (!refused) {
      SC_ASSERT_OK(status);
      check(rt.get());
      EXPECT_GT(failures, 0) << "the call never allocated: nothing was tested";
      return;
    }
    ++failures;
    ASSERT_EQ(status, SC_E_NO_MEMORY) << "allocation " << n << ": " << sc_last_error();
    EXPECT_TRUE(Contains(sc_last_error(), "out of memory")) << sc_last_error();
    if (read_only) {
      EXPECT_EQ(call(rt.get()), SC_OK) << "a failed read must leave the handle usable";
    } else {
      ExpectBroken(rt.get());
    }
  }
  FAIL() << "still failing after " << kMaxAttempts << " allocations";
}

TEST(CapiExceptionTest, CreateFailsCleanly) {
  int64_t n = 0;
  for (; n < kMaxAttempts; ++n) {
    FailAllocationsAfter(n);
    sc_runtime* rt = sc_runtime_create();
    const bool refused = AllocationWasRefused();
    StopFailingAllocations();
    if (!refused) {
      ASSERT_NE(rt, nullptr);
      sc_runtime_destroy(rt);
      break;
    }
    EXPECT_EQ(rt, nullptr);
    EXPECT_STREQ(sc_last_error(), "sc_runtime_create: out of memory");
  }
  EXPECT_GT(n, 0);
}

TEST(CapiExceptionTest, ApplyAndUpdate) {
  const std::vector<uint8_t> stream = RandomStream(3, 120);
  const Reference expected = Replay(stream);
  auto nothing = [](sc_runtime*) {};
  auto apply = [&](sc_runtime* rt) { return sc_runtime_apply(rt, stream.data(), stream.size()); };
  EveryAllocationFails(
      nothing, apply,
      [&](sc_runtime* rt) {
        SC_ASSERT_OK(sc_runtime_update(rt));
        EXPECT_EQ(ReadBack(rt).state_hash, expected.state_hash);
      },
      false);
  EveryAllocationFails(
      [&](sc_runtime* rt) { SC_ASSERT_OK(apply(rt)); }, sc_runtime_update,
      [&](sc_runtime* rt) { EXPECT_EQ(ReadBack(rt).world.size(), expected.world.size()); }, false);
}

TEST(CapiExceptionTest, Writes) {
  const sc_transform t{{1, 2, 3}, {0, 0, 0, 1}, {1, 1, 1}, 0};
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  EveryAllocationFails([](sc_runtime*) {},
                       [&](sc_runtime* rt) {
                         return sc_runtime_write_transform(rt, 512, &t, msg, sizeof(msg), &len);
                       },
                       [&](sc_runtime* rt) {
                         EXPECT_EQ(len, 68u);
                         sc_transform back;
                         SC_ASSERT_OK(sc_runtime_get_transform(rt, 512, &back));
                         EXPECT_EQ(back.position[2], 3.0f);
                       },
                       false);
  EveryAllocationFails(
      [](sc_runtime*) {},
      [&](sc_runtime* rt) { return sc_runtime_delete_entity(rt, 600, msg, sizeof(msg), &len); },
      [&](sc_runtime*) { EXPECT_EQ(len, 12u); }, false);
}

TEST(CapiExceptionTest, Interpolation) {
  const std::vector<uint8_t> stream = RandomStream(5, 80);
  EveryAllocationFails(
      [&](sc_runtime* rt) { SC_ASSERT_OK(sc_runtime_apply(rt, stream.data(), stream.size())); },
      [](sc_runtime* rt) { return sc_runtime_enable_interpolation(rt, nullptr); },
      [](sc_runtime* rt) { EXPECT_EQ(sc_runtime_interpolation_enabled(rt), 1); }, false);
  EveryAllocationFails(
      [&](sc_runtime* rt) {
        SC_ASSERT_OK(sc_runtime_enable_interpolation(rt, nullptr));
        SC_ASSERT_OK(
            sc_runtime_apply_at(rt, stream.data(), stream.size(), 1000, SC_NO_SENDER_TIME));
      },
      [](sc_runtime* rt) { return sc_runtime_update_interpolated(rt, 500'000); },
      [](sc_runtime* rt) { EXPECT_GT(sc_runtime_interpolated_entity_count(rt), 0u); }, false);
}

TEST(CapiExceptionTest, ReadsStayUsable) {
  const std::vector<uint8_t> stream = RandomStream(9, 150);
  auto prepare = [&](sc_runtime* rt) {
    SC_ASSERT_OK(sc_runtime_apply(rt, stream.data(), stream.size()));
    SC_ASSERT_OK(sc_runtime_update(rt));
  };
  std::vector<uint32_t> ids(256);
  std::vector<float> matrices(16 * 256);
  size_t count = 0;
  EveryAllocationFails(
      prepare,
      [&](sc_runtime* rt) {
        return sc_runtime_copy_world(rt, ids.data(), matrices.data(), ids.size(), &count);
      },
      [&](sc_runtime*) { EXPECT_GT(count, 0u); }, true);
  char hash[SC_STATE_HASH_CHARS];
  EveryAllocationFails(
      prepare, [&](sc_runtime* rt) { return sc_runtime_state_hash(rt, hash, sizeof(hash)); },
      [&](sc_runtime*) { EXPECT_EQ(std::string(hash), Replay(stream).state_hash); }, true);
}

}  // namespace
}  // namespace scenecrdt::capi_test
