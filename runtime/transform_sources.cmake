# SPDX-License-Identifier: Apache-2.0
# Transform side of scenecrdt::runtime (scene graph, pipeline, propagation).
set(SCENECRDT_TRANSFORM_SOURCES
  internal/block_kernels.cc
  internal/local_to_parent_cache.cc
  internal/parallel_compute.cc
  internal/piece_sequence.cc
  internal/preorder_layout.cc
  internal/propagation.cc
  internal/range_compute.cc
  internal/worker.cc
  pipeline.cc
  scene_graph.cc
  transform_system.cc
)
target_sources(scenecrdt_runtime PRIVATE ${SCENECRDT_TRANSFORM_SOURCES})
# World matrices must not depend on the compiler's choice to fuse a multiply and an add (e.g.
# under -march=native): every kernel variant fixes the same operation order (affine.h).
set_source_files_properties(${SCENECRDT_TRANSFORM_SOURCES} PROPERTIES COMPILE_OPTIONS
                            -ffp-contract=off)
