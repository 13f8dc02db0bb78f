# SPDX-License-Identifier: Apache-2.0
# Transform-side tests of runtime_tests (scene graph, pipeline, propagation).
target_sources(runtime_tests PRIVATE
)
