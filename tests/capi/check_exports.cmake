# SPDX-License-Identifier: Apache-2.0
# cmake -DLIBRARY=<libscenecrdt.so> -DHEADER=<scenecrdt.h> -DSONAME=<expected>
#       -P check_exports.cmake
# Fails unless LIBRARY's defined dynamic symbols are exactly the functions HEADER declares
# with SC_API (no C++ symbol leaks out, no declared function is missing) and its SONAME is
# SONAME.
find_program(NM nm REQUIRED)
find_program(READELF readelf REQUIRED)

file(STRINGS ${HEADER} declarations REGEX "^SC_API ")
set(declared "")
foreach(line IN LISTS declarations)
  string(REGEX MATCH "(sc_[a-z0-9_]+)\\(" match "${line}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "${HEADER}: cannot read the function name of '${line}'")
  endif()
  list(APPEND declared ${CMAKE_MATCH_1})
endforeach()
list(SORT declared)

execute_process(COMMAND ${NM} -D --defined-only ${LIBRARY} OUTPUT_VARIABLE symbols
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "nm -D failed on ${LIBRARY}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(exported "")
foreach(line IN LISTS lines)
  if(line STREQUAL "")
    continue()
  endif()
  string(REGEX REPLACE "^[0-9a-f]* *[A-Za-z] " "" name "${line}")
  string(REGEX REPLACE "@@?SCENECRDT_[0-9]+$" "" name "${name}")
  if(name MATCHES "^SCENECRDT_[0-9]+$")
    continue()  # the version node
  endif()
  list(APPEND exported ${name})
endforeach()
list(SORT exported)
if(NOT exported STREQUAL declared)
  set(extra ${exported})
  list(REMOVE_ITEM extra ${declared})
  set(missing ${declared})
  list(REMOVE_ITEM missing ${exported})
  message(FATAL_ERROR "${LIBRARY} exports what scenecrdt.h does not declare: [${extra}]; "
                      "declared but not exported: [${missing}]")
endif()

execute_process(COMMAND ${READELF} -d ${LIBRARY} OUTPUT_VARIABLE dynamic)
if(NOT dynamic MATCHES "Library soname: \\[${SONAME}\\]")
  message(FATAL_ERROR "${LIBRARY}: SONAME is not ${SONAME}")
endif()
list(LENGTH exported n)
message(STATUS "${LIBRARY}: exactly the ${n} functions of scenecrdt.h; SONAME ${SONAME}")
