# SPDX-License-Identifier: Apache-2.0
# Owns the project-wide compile flags (the warnings interface target, sanitizer flags) and the
# build-tree include directory that gives every library header its installed name
# (`scenecrdt/<folder>/<file>.h`).

# C++ only, build-tree only: the installed package exports this target (static libraries
# name it among their private dependencies) without any flag.
add_library(scenecrdt_warnings INTERFACE)
set(scenecrdt_warning_flags
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Woverloaded-virtual
  -Wimplicit-fallthrough)
if(SCENECRDT_WARNINGS_AS_ERRORS)
  list(APPEND scenecrdt_warning_flags -Werror)
endif()
target_compile_options(scenecrdt_warnings INTERFACE
  "$<BUILD_INTERFACE:$<$<COMPILE_LANGUAGE:CXX>:${scenecrdt_warning_flags}>>")

if(SCENECRDT_SANITIZE)
  add_compile_options(-fsanitize=${SCENECRDT_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${SCENECRDT_SANITIZE})
  if(SCENECRDT_SANITIZE MATCHES "undefined")
    # UBSan's vptr check probes memory through a pipe: in a process out of file descriptors
    # (which the server must survive: docs/SERVER.md "Connections and file descriptors") it
    # reports every polymorphic call it has not cached yet (Boost's error_category) as an
    # invalid object and aborts. The other undefined-behaviour checks stay on.
    add_compile_options(-fno-sanitize=vptr)
    add_link_options(-fno-sanitize=vptr)
  endif()
endif()

# Sources whose Boost.Beast WebSocket/TLS instantiations dominate a sanitizer build compile at
# -O0 there (g++ only): http_session.cc took 205 s at -O1 under ASan+UBSan and 92 s at -O0, the
# same checks on (docs/TESTING.md "Build time"). Release builds are untouched.
function(scenecrdt_sanitized_at_O0)
  if(SCENECRDT_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set_source_files_properties(${ARGN} DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                                PROPERTIES COMPILE_OPTIONS -O0)
  endif()
endfunction()

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

# Library headers are included as "scenecrdt/<folder>/<file>.h" inside the project and by
# installed consumers alike. In the build tree, ${PROJECT_BINARY_DIR}/include/scenecrdt/<folder>
# is a link to the source folder, so the name resolves without copying headers.
set(SCENECRDT_BUILD_INCLUDE_DIR ${PROJECT_BINARY_DIR}/include)
file(MAKE_DIRECTORY ${SCENECRDT_BUILD_INCLUDE_DIR}/scenecrdt)
function(scenecrdt_expose_headers target folder)
  set(link ${SCENECRDT_BUILD_INCLUDE_DIR}/scenecrdt/${folder})
  if(NOT EXISTS ${link})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${link} SYMBOLIC)
  endif()
  get_target_property(type ${target} TYPE)
  set(scope PUBLIC)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)  # header-only targets (scenecrdt::net)
  endif()
  target_include_directories(${target} ${scope} $<BUILD_INTERFACE:${SCENECRDT_BUILD_INCLUDE_DIR}>
                                                $<INSTALL_INTERFACE:include>)
endfunction()
