# SPDX-License-Identifier: Apache-2.0
# Checks that a public header compiles alone and that none of propagation's internals come with
# it (SSE/AVX intrinsics, the aligned allocator, block kernels, the worker thread): preprocesses
# a translation unit that includes only HEADER and reads the list of files it pulled in.
#   cmake -DCXX=<compiler> -DINCLUDE_DIR=<build include dir> -DHEADER=scenecrdt/runtime/runtime.h
#         -DOUT=<scratch path prefix> -P public_header_check.cmake
foreach(var CXX INCLUDE_DIR HEADER OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "public_header_check.cmake: ${var} is not set")
  endif()
endforeach()
file(WRITE ${OUT}.cc "#include \"${HEADER}\"\n")
execute_process(
  COMMAND ${CXX} -std=c++20 -E -I${INCLUDE_DIR} ${OUT}.cc
  OUTPUT_FILE ${OUT}.ii
  ERROR_VARIABLE errors
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${HEADER} does not compile alone:\n${errors}")
endif()
# Line markers name every file that was entered: `# 1 "/usr/include/c++/12/vector" 1 3`.
file(STRINGS ${OUT}.ii markers REGEX "^# 1 \"")
list(REMOVE_DUPLICATES markers)
list(LENGTH markers num_files)
set(forbidden
    "intrin\\.h\"" "/aligned_allocator\\.h\"" "/block_kernels\\.h\"" "runtime/transform/affine\\.h\""
    "runtime/transform/propagation\\.h\"" "/worker\\.h\"" "/c\\+\\+/[0-9]+/thread\"")
set(leaks "")
foreach(pattern ${forbidden})
  foreach(marker ${markers})
    if(marker MATCHES "${pattern}")
      string(APPEND leaks "\n  ${marker}")
    endif()
  endforeach()
endforeach()
if(NOT leaks STREQUAL "")
  message(FATAL_ERROR "${HEADER} pulls in internals of propagation:${leaks}")
endif()
message(STATUS "${HEADER} compiles alone: ${num_files} files, no propagation internals")
