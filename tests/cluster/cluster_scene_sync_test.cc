// SPDX-License-Identifier: Apache-2.0
// ClusterSceneSync: advertised scene sequences and resume points, own appends holding the
// resume point back until the read loop passes them, bounded marks.
#include "scenecrdt/server/cluster/cluster_scene_sync.h"

#include <gtest/gtest.h>

namespace scenecrdt::server {
namespace {

using cluster::SceneSequenceFromStreamId;
using cluster::StreamId;

TEST(ClusterSceneSyncTest, AdvertisesTheLastPositionMergedByAStoreSequence) {
  ClusterSceneSync sync;
  sync.Reset(StreamId{100, 0}, 5);
  EXPECT_EQ(sync.Advertise(4), 0u);  // before the load: nothing known
  EXPECT_EQ(sync.Advertise(5), SceneSequenceFromStreamId({100, 0}));
  sync.NoteRead(StreamId{120, 3}, 9, 9);
  EXPECT_EQ(sync.Advertise(8), SceneSequenceFromStreamId({100, 0}));
  EXPECT_EQ(sync.Advertise(9), SceneSequenceFromStreamId({120, 3}));
  EXPECT_EQ(sync.cursor(), (StreamId{120, 3}));
}

TEST(ClusterSceneSyncTest, ResumeUsesTheNewestMarkAtOrBeforeThePosition) {
  ClusterSceneSync sync;
  sync.Reset(StreamId{100, 0}, 5);
  sync.NoteRead(StreamId{120, 0}, 9, 9);
  sync.NoteRead(StreamId{140, 0}, 12, 12);
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({99, 0})), std::nullopt);  // too old
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({100, 0})), 5u);
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({130, 0})), 9u);   // another node's point
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({900, 0})), 12u);  // ahead of this node
}

TEST(ClusterSceneSyncTest, OwnEntriesNotYetReadHoldTheResumePointBack) {
  ClusterSceneSync sync;
  sync.Reset(StreamId{100, 0}, 0);
  // Own flush of store changes (0, 3] is appended as 150-0; meanwhile the read loop merges
  // another node's 110-0 at store sequence 4.
  sync.NoteAppended(StreamId{150, 0}, 0);
  sync.NoteRead(StreamId{110, 0}, 4, 3);
  // A client at 110-0 lacks the own entry 150-0 (changed at store sequences 1..3).
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({110, 0})), 0u);
  // Once the read loop passed 150-0, marks no longer need to go back.
  sync.NoteRead(StreamId{150, 0}, 4, 3);
  EXPECT_EQ(sync.own_appends(), 0u);
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({150, 0})), 3u);
}

TEST(ClusterSceneSyncTest, UnappendedOwnChangesAreCoveredByTheDurablePoint) {
  ClusterSceneSync sync;
  sync.Reset(StreamId{100, 0}, 2);
  // Own changes 3..6 are merged, not yet in Redis (durable 2); another node's entry merges.
  sync.NoteRead(StreamId{105, 0}, 7, 2);
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({105, 0})), 2u);
}

TEST(ClusterSceneSyncTest, BoundedMarksAndOwnAppends) {
  ClusterSceneSync sync;
  sync.Reset(StreamId{1, 0}, 0);
  for (uint64_t i = 2; i < 3000; ++i) sync.NoteRead(StreamId{i, 0}, i, i);
  EXPECT_EQ(sync.marks(), ClusterSceneSync::kMaxMarks);
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({2, 0})), std::nullopt);
  for (uint64_t i = 0; i < 3000; ++i) sync.NoteAppended(StreamId{5000 + i, 0}, 10 + i);
  EXPECT_EQ(sync.own_appends(), ClusterSceneSync::kMaxOwnAppends);
  // The merged oldest keeps the oldest start.
  sync.NoteRead(StreamId{4000, 0}, 4000, 5000);
  EXPECT_EQ(sync.ResumeFrom(SceneSequenceFromStreamId({4000, 0})), 10u);
}

}  // namespace
}  // namespace scenecrdt::server
