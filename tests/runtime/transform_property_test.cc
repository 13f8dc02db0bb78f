// SPDX-License-Identifier: Apache-2.0
// Property tests of TransformSystem against the from-scratch reference of
// transform_test_util.h: after every step of random operation sequences (puts, removes,
// reparents with loops and placeholders, local components, 1 to 8 threads, layout rebuilds
// forced or not) the effective tree equals the reference and world matrices equal the
// double-precision reference within 1e-5 relative; world matrices are bitwise equal across
// permutations of the same final set of calls.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "scenecrdt/runtime/transform_system.h"
#include "scenecrdt/testing/scene_shapes.h"
#include "tests/runtime/transform_test_util.h"

namespace scenecrdt::runtime {
namespace {

using protocol::EntityId;
using protocol::Transform;

using protocol::MakeEntityId;

// Entity pool: small numbers plus two versions of one number (distinct ids).
const std::vector<EntityId> kPool = {
    1, 2, 3, 4, 5, 6, 7, 8, MakeEntityId(600, 0), MakeEntityId(600, 1)};

rc::Gen<EntityId> GenEntity() { return rc::gen::elementOf(kPool); }
rc::Gen<EntityId> GenParent() {
  return rc::gen::weightedOneOf<EntityId>({{1, rc::gen::just<EntityId>(0)}, {4, GenEntity()}});
}
rc::Gen<float> GenFloat(int lo, int hi) {
  return rc::gen::map(rc::gen::inRange(lo, hi + 1),
                      [](int v) { return static_cast<float>(v) / 100.0f; });
}
rc::Gen<glm::vec3> GenVec(int lo, int hi) {
  return rc::gen::apply([](float x, float y, float z) { return glm::vec3(x, y, z); },
                        GenFloat(lo, hi), GenFloat(lo, hi), GenFloat(lo, hi));
}
rc::Gen<glm::quat> GenQuat() {
  return rc::gen::map(GenVec(-100, 100), [](glm::vec3 v) {
    const float w = 0.7f;
    glm::quat q(w, v.x, v.y, v.z);
    return glm::normalize(q);
  });
}
rc::Gen<Transform> GenTransform() {
  return rc::gen::apply(
      [](EntityId parent, glm::vec3 p, glm::quat q, glm::vec3 s, bool uniform) {
        return testing::MakeTransform(parent, p, q, uniform ? glm::vec3(s.x) : s);
      },
      GenParent(), GenVec(-200, 200), GenQuat(), GenVec(50, 200), rc::gen::arbitrary<bool>());
}

enum class OpKind { kPut, kRemove, kLocal, kClearLocal };
struct Op {
  OpKind kind = OpKind::kPut;
  EntityId entity = 0;
  Transform transform;
  int local_kind = 0;  // which local component
  int order = 0;
  glm::vec3 v{0.0f};
  glm::quat q{1, 0, 0, 0};
  glm::mat4 m{1.0f};
};

rc::Gen<Op> GenOp() {
  return rc::gen::apply(
      [](int kind, EntityId e, Transform t, int local_kind, int order, glm::vec3 v, glm::quat q,
         glm::vec3 mt) {
        Op op;
        op.kind = kind < 6    ? OpKind::kPut
                  : kind < 8  ? OpKind::kRemove
                  : kind < 11 ? OpKind::kLocal
                              : OpKind::kClearLocal;
        op.entity = e;
        op.transform = t;
        op.local_kind = local_kind;
        op.order = order;
        op.v = v;
        op.q = q;
        op.m = glm::translate(glm::mat4(1.0f), mt) * glm::mat4_cast(q);
        return op;
      },
      rc::gen::inRange(0, 12), GenEntity(), GenTransform(), rc::gen::inRange(0, 10),
      rc::gen::inRange(0, kNumEulerOrders), GenVec(-150, 150), GenQuat(), GenVec(-200, 200));
}

// Applies `op` to the system and to the reference state.
void Apply(const Op& op, TransformSystem& ts, std::map<EntityId, Transform>& transforms,
           std::map<EntityId, LocalComponents>& locals) {
  const EntityId e = op.entity;
  switch (op.kind) {
    case OpKind::kPut:
      ts.SetTransform(e, op.transform);
      transforms[e] = op.transform;
      return;
    case OpKind::kRemove:
      ts.RemoveTransform(e);
      transforms.erase(e);
      return;
    case OpKind::kClearLocal:
      ts.ClearLocalComponents(e);
      locals.erase(e);
      return;
    case OpKind::kLocal:
      break;
  }
  LocalComponents& c = locals[e];
  const auto order = static_cast<EulerOrder>(op.order);
  switch (op.local_kind) {
    case 0:
      ts.SetRotationEuler(e, order, op.v);
      c.rotation_euler[op.order] = op.v;
      c.present |= LocalComponents::kRotationEuler0 << op.order;
      break;
    case 1:
      ts.SetPostRotation(e, op.q);
      c.post_rotation = op.q;
      c.present |= LocalComponents::kPostRotation;
      break;
    case 2:
      ts.SetPostRotationEuler(e, order, op.v);
      c.post_rotation_euler[op.order] = op.v;
      c.present |= LocalComponents::kPostRotationEuler0 << op.order;
      break;
    case 3:
      ts.SetRotationPivot(e, op.v);
      c.rotation_pivot = op.v;
      c.present |= LocalComponents::kRotationPivot;
      break;
    case 4:
      ts.SetRotationPivotTranslation(e, op.v);
      c.rotation_pivot_translation = op.v;
      c.present |= LocalComponents::kRotationPivotTranslation;
      break;
    case 5:
      ts.SetScalePivot(e, op.v);
      c.scale_pivot = op.v;
      c.present |= LocalComponents::kScalePivot;
      break;
    case 6:
      ts.SetScalePivotTranslation(e, op.v);
      c.scale_pivot_translation = op.v;
      c.present |= LocalComponents::kScalePivotTranslation;
      break;
    case 7:
      ts.SetParentScaleInverse(e, true);
      c.present |= LocalComponents::kParentScaleInverse;
      break;
    case 8:
      ts.SetLocalToParentOverride(e, op.m);
      c.local_to_parent = op.m;
      c.present |= LocalComponents::kLocalToParent;
      break;
    default:
      ts.SetLocalToWorldOverride(e, op.m);
      c.local_to_world = op.m;
      c.present |= LocalComponents::kLocalToWorld;
      break;
  }
}

void CheckAgainstReference(const TransformSystem& ts,
                           const std::map<EntityId, Transform>& transforms,
                           const std::map<EntityId, LocalComponents>& locals) {
  RC_ASSERT(ts.CheckLayout());
  const auto tree = testing::ReferenceTree(transforms);
  const auto nodes = ts.Nodes();
  RC_ASSERT(nodes.size() == tree.size());
  for (const NodeInfo& n : nodes) {
    const auto it = tree.find(n.entity);
    RC_ASSERT(it != tree.end());
    RC_ASSERT(n.effective_parent == it->second.effective_parent);
    RC_ASSERT(n.parked == it->second.parked);
    RC_ASSERT(n.placeholder == it->second.placeholder);
    RC_ASSERT(ts.EffectiveParent(n.entity) == n.effective_parent);
  }
  const auto worlds = testing::ReferenceWorlds(transforms, locals);
  for (const auto& [e, w] : worlds) {
    const auto actual = ts.WorldMatrix(e);
    RC_ASSERT(actual.has_value());
    const double err = testing::RelativeError(*actual, w);
    if (err > 1e-5) {
      RC_FAIL("entity " + std::to_string(e) + " relative error " + std::to_string(err) + "\n" +
              testing::MatString(*actual) + "expected\n" + testing::MatString(glm::mat4(w)));
    }
  }
}

constexpr int kPolicyChoices = 5;
constexpr int kMaxThreads = 8;  // thread counts drawn: 1..8
LayoutPolicy GenPolicyChoice(int choice) {
  LayoutPolicy p;
  p.min_parallel_entities = 1;  // exercise the split into 2..8 parts on small scenes
  if (choice == 1) {            // rebuild on every structural change, bulk loop search
    p.min_rebuild_changes = 0;
    p.rebuild_divisor = 1;
    p.min_bulk_graph_changes = 0;
  } else if (choice == 2) {  // rebuild when a little fragmented
    p.min_pieces = 2;
    p.min_piece_length = 2;
  } else if (choice == 3) {  // streaming kernels, ancestor stack shallower than the scenes
    p.min_streaming_entities = 1;
    p.stream_stack_depth = 2;
  } else if (choice == 4) {  // baseline instruction set, streaming
    p.kernel_isa = KernelIsa::kSse2;
    p.min_streaming_entities = 1;
  }
  return p;
}

RC_GTEST_PROP(TransformPropertyTest, MatchesReferenceAfterEveryStep, ()) {
  const auto policy = *rc::gen::inRange(0, kPolicyChoices);
  const auto steps = *rc::gen::container<std::vector<std::vector<Op>>>(
      rc::gen::resize(4, rc::gen::nonEmpty(rc::gen::container<std::vector<Op>>(GenOp()))));
  const auto threads =
      *rc::gen::container<std::vector<int>>(steps.size(), rc::gen::inRange(1, kMaxThreads + 1));
  TransformSystem ts;
  ts.SetLayoutPolicy(GenPolicyChoice(policy));
  std::map<EntityId, Transform> transforms;
  std::map<EntityId, LocalComponents> locals;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (const Op& op : steps[i]) Apply(op, ts, transforms, locals);
    ts.Update({threads[i]});
    for (auto it = locals.begin(); it != locals.end();) {
      it = it->second.present == 0 ? locals.erase(it) : std::next(it);
    }
    CheckAgainstReference(ts, transforms, locals);
  }
}

// The same final set of calls in two random orders, with different histories (stale writes
// first, Updates at random points, 1 to 8 threads): bit-identical world matrices.
RC_GTEST_PROP(TransformPropertyTest, PermutationsGiveBitIdenticalWorlds, ()) {
  const auto final_ops = *rc::gen::container<std::vector<Op>>(GenOp());
  const auto noise = *rc::gen::container<std::vector<Op>>(GenOp());
  // Keep one final op per (entity, kind) so both orders have the same final state.
  std::vector<Op> ops;
  for (const Op& op : final_ops) {
    const bool dup = std::any_of(ops.begin(), ops.end(), [&](const Op& o) {
      return o.entity == op.entity &&
             ((o.kind != OpKind::kLocal && op.kind != OpKind::kLocal) ||
              (o.kind == OpKind::kLocal && op.kind == OpKind::kLocal) ||
              o.kind == OpKind::kClearLocal || op.kind == OpKind::kClearLocal);
    });
    if (!dup) ops.push_back(op);
  }
  auto run = [&](uint64_t seed) {
    TransformSystem ts;
    ts.SetLayoutPolicy(GenPolicyChoice(static_cast<int>(seed % kPolicyChoices)));
    std::map<EntityId, Transform> transforms;
    std::map<EntityId, LocalComponents> locals;
    uint64_t h = seed;
    auto next = [&h] {
      h = h * 6364136223846793005ull + 1442695040888963407ull;
      return h >> 33;
    };
    std::vector<Op> order = ops;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[next() % i]);
    for (const Op& op : noise) {  // stale history, erased below by the final ops
      if (op.kind == OpKind::kPut) Apply(op, ts, transforms, locals);
      if (next() % 3 == 0) ts.Update({static_cast<int>(next() % kMaxThreads) + 1});
    }
    for (const Op& op : noise) {
      if (op.kind == OpKind::kPut) {
        ts.RemoveTransform(op.entity);
        transforms.erase(op.entity);
      }
    }
    for (const Op& op : order) {
      Apply(op, ts, transforms, locals);
      if (next() % 3 == 0) ts.Update({static_cast<int>(next() % kMaxThreads) + 1});
    }
    ts.Update({static_cast<int>(next() % kMaxThreads) + 1});
    return ts;
  };
  const auto seed_a = *rc::gen::arbitrary<uint32_t>();
  const auto seed_b = *rc::gen::arbitrary<uint32_t>();
  const TransformSystem a = run(seed_a);
  const TransformSystem b = run(seed_b);
  const auto nodes_a = a.Nodes();
  const auto nodes_b = b.Nodes();
  RC_ASSERT(nodes_a.size() == nodes_b.size());
  for (std::size_t i = 0; i < nodes_a.size(); ++i) {
    RC_ASSERT(nodes_a[i].entity == nodes_b[i].entity);
    RC_ASSERT(nodes_a[i].effective_parent == nodes_b[i].effective_parent);
    RC_ASSERT(nodes_a[i].parked == nodes_b[i].parked);
    RC_ASSERT(nodes_a[i].placeholder == nodes_b[i].placeholder);
    RC_ASSERT(testing::BitwiseEqual(*a.WorldMatrix(nodes_a[i].entity),
                                    *b.WorldMatrix(nodes_b[i].entity)));
  }
}

// Every generated shape (random size, seed, dirty set, policy), computed on 1..8 threads:
// the bits of one thread, for the full sweep and for the dirty update after it.
RC_GTEST_PROP(TransformPropertyTest, AnyThreadCountGivesOneThreadsBitsOnEveryShape, ()) {
  namespace shapes = scenecrdt::testing;
  using shapes::SceneShape;
  const auto shape =
      static_cast<SceneShape>(*rc::gen::inRange(0, static_cast<int>(SceneShape::kHumanoids67) + 1));
  const auto n = *rc::gen::inRange<uint32_t>(1, 3000);
  const auto seed = *rc::gen::arbitrary<uint32_t>();
  const auto threads = *rc::gen::inRange(2, kMaxThreads + 1);
  const auto policy = *rc::gen::inRange(0, kPolicyChoices);
  const auto dirty = *rc::gen::container<std::vector<uint32_t>>(rc::gen::inRange<uint32_t>(0, n));
  const std::vector<uint32_t> parents = shapes::GenerateParents(shape, n, seed);
  auto run = [&](int t) {
    TransformSystem ts;
    ts.SetLayoutPolicy(GenPolicyChoice(policy));
    for (uint32_t i = 0; i < n; ++i) {
      Transform tr = shapes::ShapeLocalTransform(i, seed, i % 2 == 0);
      tr.parent = parents[i] == shapes::kShapeRoot ? 0 : parents[i] + 1;
      ts.SetTransform(i + 1, tr);
      if (i % 7 == 3) ts.SetRotationPivot(i + 1, {0.5f, 0.0f, 0.25f});
    }
    ts.Update({t});
    std::vector<glm::mat4> worlds;
    for (uint32_t i = 0; i < n; ++i) worlds.push_back(*ts.WorldMatrix(i + 1));
    for (uint32_t i : dirty) {
      Transform tr = *ts.GetTransform(i + 1);
      tr.position.z += 0.5f;
      ts.SetTransform(i + 1, tr);
    }
    ts.Update({t});
    for (uint32_t i = 0; i < n; ++i) worlds.push_back(*ts.WorldMatrix(i + 1));
    return worlds;
  };
  const std::vector<glm::mat4> one = run(1);
  const std::vector<glm::mat4> many = run(threads);
  RC_ASSERT(one.size() == many.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    if (!testing::BitwiseEqual(one[i], many[i])) {
      RC_FAIL(std::string(shapes::SceneShapeName(shape)) + ": matrix " + std::to_string(i) +
              " differs on " + std::to_string(threads) + " threads");
    }
  }
}

}  // namespace
}  // namespace scenecrdt::runtime
