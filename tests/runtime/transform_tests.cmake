# SPDX-License-Identifier: Apache-2.0
# Transform-side tests of runtime_tests (scene graph, pipeline, propagation).
target_sources(runtime_tests PRIVATE
  parallel_compute_test.cc
  pipeline_test.cc
  propagation_test.cc
  public_header_test.cc
  scene_graph_test.cc
  transform_property_test.cc
)
# What a renderer includes compiles alone, without propagation's internals.
add_test(NAME PublicHeaderTest.RuntimeHeaderIncludesNoInternals
         COMMAND ${CMAKE_COMMAND} -DCXX=${CMAKE_CXX_COMPILER}
                 -DINCLUDE_DIR=${SCENECRDT_BUILD_INCLUDE_DIR} -DHEADER=scenecrdt/runtime/runtime.h
                 -DOUT=${CMAKE_CURRENT_BINARY_DIR}/public_header_check
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/public_header_check.cmake)
