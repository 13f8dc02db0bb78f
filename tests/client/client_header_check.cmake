# SPDX-License-Identifier: Apache-2.0
# Checks that <scenecrdt/client/client.h> compiles alone and pulls in nothing of the network
# side: no Boost (Asio, Beast), no flatbuffers, none of the client's or net's internals, no
# session envelope. Preprocesses a translation unit that includes only the header, reads the
# list of files it entered, and prints the preprocessed line count (docs/CLIENT.md).
#   cmake -DCXX=<compiler> -DINCLUDE_DIR=<build include dir> -DOUT=<scratch path prefix>
#         -P client_header_check.cmake
foreach(var CXX INCLUDE_DIR OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "client_header_check.cmake: ${var} is not set")
  endif()
endforeach()
set(header scenecrdt/client/client.h)
file(WRITE ${OUT}.cc "#include \"${header}\"\n")
execute_process(
  COMMAND ${CXX} -std=c++20 -E -I${INCLUDE_DIR} ${OUT}.cc
  OUTPUT_FILE ${OUT}.ii
  ERROR_VARIABLE errors
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${header} does not compile alone:\n${errors}")
endif()
# Line markers name every file that was entered: `# 1 "/usr/include/boost/asio.hpp" 1 3`.
file(STRINGS ${OUT}.ii markers REGEX "^# 1 \"")
list(REMOVE_DUPLICATES markers)
list(LENGTH markers num_files)
set(forbidden "/boost/" "flatbuffers" "/scenecrdt/net/" "/client/internal/" "/session/"
              "/c\\+\\+/[0-9]+/thread\"")
set(leaks "")
foreach(pattern ${forbidden})
  foreach(marker ${markers})
    if(marker MATCHES "${pattern}")
      string(APPEND leaks "\n  ${marker}")
    endif()
  endforeach()
endforeach()
if(NOT leaks STREQUAL "")
  message(FATAL_ERROR "${header} pulls in the network side:${leaks}")
endif()
file(STRINGS ${OUT}.ii lines)
list(LENGTH lines num_lines)
message(STATUS "${header} compiles alone: ${num_files} files, ${num_lines} non-blank preprocessed lines, "
               "no Boost, flatbuffers or client internals")
