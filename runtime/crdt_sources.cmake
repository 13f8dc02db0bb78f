# SPDX-License-Identifier: Apache-2.0
# CRDT side of scenecrdt::runtime (store, Lamport writes, snapshots, state hash) and the
# Runtime facade joining it to the transform side.
target_sources(scenecrdt_runtime PRIVATE
  crdt_admission.cc
  crdt_local_writes.cc
  crdt_state_hash.cc
  crdt_store.cc
  runtime.cc
  sha256.cc
)
# The Runtime's interpolated presentation (docs/INTERPOLATION.md). Built without fused
# multiply-add like the transform sources, so a presentation is bit-identical across builds.
set(SCENECRDT_INTERPOLATION_SOURCES
  interpolation.cc
  internal/interpolation_clock.cc
  internal/interpolation_presentation.cc
  internal/interpolation_track.cc
  playback_timeline.cc
)
target_sources(scenecrdt_runtime PRIVATE ${SCENECRDT_INTERPOLATION_SOURCES})
set_source_files_properties(${SCENECRDT_INTERPOLATION_SOURCES} PROPERTIES COMPILE_OPTIONS
                            -ffp-contract=off)
