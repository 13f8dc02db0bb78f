# SPDX-License-Identifier: Apache-2.0
# Transform side of scenecrdt::runtime (scene graph, pipeline, propagation).
target_sources(scenecrdt_runtime PRIVATE
)
