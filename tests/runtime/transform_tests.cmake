# SPDX-License-Identifier: Apache-2.0
# Transform-side tests of runtime_tests (scene graph, pipeline, propagation).
target_sources(runtime_tests PRIVATE
  pipeline_test.cc
  propagation_test.cc
  scene_graph_test.cc
  transform_property_test.cc
)
