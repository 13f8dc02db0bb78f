# SPDX-License-Identifier: Apache-2.0
# Owns the WebAssembly build's stand-ins for host packages (preset wasm, docs/WEB.md): glm::glm
# from a build-tree folder that holds only a link to the host's GLM headers (host libc headers
# must never reach emcc), and the SIMD flags that compile the SSE2 kernels to wasm SIMD.
set(SCENECRDT_GLM_HEADERS /usr/include/glm CACHE PATH "GLM's header folder (the one named glm)")
if(NOT EXISTS ${SCENECRDT_GLM_HEADERS}/glm.hpp)
  message(FATAL_ERROR "GLM not found at SCENECRDT_GLM_HEADERS=${SCENECRDT_GLM_HEADERS}: "
                      "install libglm-dev (bash scripts/deps.sh) or pass -DSCENECRDT_GLM_HEADERS=")
endif()
set(glm_root ${PROJECT_BINARY_DIR}/glm-include)
file(MAKE_DIRECTORY ${glm_root})
if(NOT EXISTS ${glm_root}/glm)
  file(CREATE_LINK ${SCENECRDT_GLM_HEADERS} ${glm_root}/glm SYMBOLIC)
endif()
add_library(glm::glm INTERFACE IMPORTED)
set_target_properties(glm::glm PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${glm_root})
add_compile_options(-msimd128 -msse2)
