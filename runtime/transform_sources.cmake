# SPDX-License-Identifier: Apache-2.0
# Transform side of scenecrdt::runtime (scene graph, pipeline, propagation).
target_sources(scenecrdt_runtime PRIVATE
  internal/worker.cc
  pipeline.cc
  propagation.cc
  scene_graph.cc
  scene_shapes.cc
  transform_system.cc
)
