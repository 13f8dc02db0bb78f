# SPDX-License-Identifier: Apache-2.0
# Owns the project-wide compile flags: the warnings interface target and sanitizer flags.

add_library(scenecrdt_warnings INTERFACE)
target_compile_options(scenecrdt_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wimplicit-fallthrough)
if(SCENECRDT_WARNINGS_AS_ERRORS)
  target_compile_options(scenecrdt_warnings INTERFACE -Werror)
endif()

if(SCENECRDT_SANITIZE)
  add_compile_options(-fsanitize=${SCENECRDT_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SCENECRDT_SANITIZE})
endif()

# With libFuzzer, every library is coverage-instrumented so the fuzzers see inside the
# decoders (the fuzz targets themselves add -fsanitize=fuzzer for libFuzzer's main()).
if(SCENECRDT_BUILD_FUZZERS)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# Fuzz targets: real libFuzzer with clang, otherwise a main() that replays a corpus.
function(scenecrdt_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} scenecrdt_warnings)
  if(SCENECRDT_BUILD_FUZZERS)
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  else()
    target_sources(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tools/fuzz/replay_main.cc)
  endif()
endfunction()
