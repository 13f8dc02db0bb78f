# SPDX-License-Identifier: Apache-2.0
# Owns the install rules and the CMake package (docs/PACKAGING.md): installed libraries and
# headers under include/scenecrdt/<folder>/, two export sets (scenecrdtTargets: the C++
# libraries; scenecrdtCTargets: the C ABI), lib/cmake/scenecrdt/scenecrdtConfig.cmake, the
# pkg-config file, and (cmake/scenecrdt_install_server.cmake) the command line, the viewer's
# assets and the systemd units. Every rule names its install component, one per Debian
# package (cmake/scenecrdt_cpack.cmake): server (scenecrdt), lib (libscenecrdt1), dev
# (libscenecrdt-dev); a rule without COMPONENT lands in dev (the top-level CMakeLists.txt).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SCENECRDT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/scenecrdt)

# The private headers the given headers include, transitively: any header in a subfolder of a
# library folder ("scenecrdt/<folder>/<subfolder>/.../<file>.h": runtime/internal/,
# runtime/crdt/, ...), as absolute paths. Public headers (directly in a library folder) still
# include a few private ones (flat maps, the CRDT store's parts); a consumer cannot compile them
# without these, and gets no other private header.
function(scenecrdt_internal_closure out)
  set(pending ${ARGN})
  set(found "")
  while(pending)
    list(POP_FRONT pending file)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    file(STRINGS ${file} lines REGEX "^#include \"scenecrdt/[a-z_]+/[a-z_/]+/[a-z0-9_]+\\.h\"")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^#include \"scenecrdt/([a-z_]+/[a-z_/]+/[a-z0-9_]+\\.h)\".*" "\\1"
             relative "${line}")
      set(path ${PROJECT_SOURCE_DIR}/${relative})
      if(NOT EXISTS ${path})
        message(FATAL_ERROR "${file} includes ${relative}, which does not exist")
      endif()
      if(NOT path IN_LIST found)
        list(APPEND found ${path})
        list(APPEND pending ${path})
      endif()
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# A sanitized library needs the sanitizer runtimes in whatever links it.
function(scenecrdt_install_link_options target)
  if(SCENECRDT_SANITIZE)
    target_link_options(${target} INTERFACE
                        "$<INSTALL_INTERFACE:-fsanitize=${SCENECRDT_SANITIZE}>")
  endif()
endfunction()

# scenecrdt_install_cxx_library(<target> <folder> [EXPORT_NAME <name>] HEADERS <file>...):
# installs a C++ library as scenecrdt::<name> (default: <folder>) with its public headers
# (file names in the current source folder, installed as <scenecrdt/<folder>/<file>>) and the
# private headers they need.
function(scenecrdt_install_cxx_library target folder)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "HEADERS" ${ARGN})
  if(NOT ARG_HEADERS)
    message(FATAL_ERROR "scenecrdt_install_cxx_library(${target}): no HEADERS")
  endif()
  if(NOT ARG_EXPORT_NAME)
    set(ARG_EXPORT_NAME ${folder})
  endif()
  get_target_property(type ${target} TYPE)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
  if(type STREQUAL "INTERFACE_LIBRARY")  # an umbrella over other libraries
    target_compile_features(${target} INTERFACE cxx_std_20)
  else()
    # Shared (SCENECRDT_SHARED): the C++ ABI may change with every minor version (0.x).
    set_target_properties(${target} PROPERTIES
      INSTALL_RPATH "$ORIGIN"
      VERSION ${PROJECT_VERSION}
      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
    target_compile_features(${target} PUBLIC cxx_std_20)
  endif()
  scenecrdt_install_link_options(${target})
  scenecrdt_install_library_files(${target} scenecrdtTargets)
  set(headers "")
  foreach(header IN LISTS ARG_HEADERS)
    list(APPEND headers ${CMAKE_CURRENT_SOURCE_DIR}/${header})
  endforeach()
  install(FILES ${headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/scenecrdt/${folder}
          COMPONENT dev)
  scenecrdt_internal_closure(internals ${headers})
  foreach(path IN LISTS internals)
    file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${path})
    get_filename_component(destination ${relative} DIRECTORY)
    install(FILES ${path} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/scenecrdt/${destination}
            COMPONENT dev)
  endforeach()
endfunction()

# scenecrdt_install_library_files(<target> <export set>): a library's files, split by
# package: static archives and the unversioned .so link to dev, a shared library to lib.
function(scenecrdt_install_library_files target export)
  install(TARGETS ${target} EXPORT ${export}
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lib)
endfunction()

# The C ABI library (capi/): libscenecrdt.so* and <scenecrdt/scenecrdt.h>, as scenecrdt::c.
function(scenecrdt_install_c_library target)
  set_target_properties(${target} PROPERTIES EXPORT_NAME c)
  scenecrdt_install_link_options(${target})
  scenecrdt_install_library_files(${target} scenecrdtCTargets)
  install(FILES ${PROJECT_SOURCE_DIR}/capi/scenecrdt.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/scenecrdt COMPONENT dev)
  scenecrdt_install_pkgconfig()
endfunction()

# lib/pkgconfig/scenecrdt.pc: the C ABI for `cc $(pkg-config --cflags --libs scenecrdt)`.
# Its prefix is the one installed to, written at install time (`cmake --install --prefix P`
# gives P; the Debian packages /usr, for which pkg-config prints no -I/-L at all). The build
# tree's copy names CMAKE_INSTALL_PREFIX.
function(scenecrdt_install_pkgconfig)
  set(pcdir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  set(PC_PREFIX ${CMAKE_INSTALL_PREFIX})
  set(PC_LIBS_EXTRA "")
  if(SCENECRDT_SANITIZE)  # a sanitized library needs the runtimes in whatever links it
    set(PC_LIBS_EXTRA " -fsanitize=${SCENECRDT_SANITIZE}")
  endif()
  set(pc ${PROJECT_BINARY_DIR}/scenecrdt.pc)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/scenecrdt.pc.in ${pc} @ONLY)
  set(staged ${PROJECT_BINARY_DIR}/pkgconfig-install/scenecrdt.pc)
  install(CODE "
    file(READ \"${pc}\" text)
    string(REGEX REPLACE \"(^|\\n)prefix=[^\\n]*\" \"\\\\1prefix=\${CMAKE_INSTALL_PREFIX}\" text \"\${text}\")
    file(WRITE \"${staged}\" \"\${text}\")
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${pcdir}\" TYPE FILE
         FILES \"${staged}\")" COMPONENT dev)
endfunction()

# The package files; called once, after every library is defined.
function(scenecrdt_install_package)
  # Static libraries list their private link dependencies in the export; the warning flags
  # target is one of them, exported empty (its options are build-tree only).
  set_target_properties(scenecrdt_warnings PROPERTIES EXPORT_NAME internal_warnings)
  install(TARGETS scenecrdt_warnings EXPORT scenecrdtTargets COMPONENT dev)
  install(EXPORT scenecrdtTargets NAMESPACE scenecrdt:: FILE scenecrdtTargets.cmake
          DESTINATION ${SCENECRDT_INSTALL_CMAKEDIR} COMPONENT dev)
  install(EXPORT scenecrdtCTargets NAMESPACE scenecrdt:: FILE scenecrdtCTargets.cmake
          DESTINATION ${SCENECRDT_INSTALL_CMAKEDIR} COMPONENT dev)
  # The build tree is a package too (find_package(scenecrdt) with scenecrdt_DIR=<build>):
  # tests/docs builds the C++ snippets of the docs against it.
  # The targets are listed (not the export sets): the build tree's client also names the
  # header-only scenecrdt_net, which the installed package leaves out.
  set(build_targets scenecrdt_warnings)
  foreach(target scenecrdt_protocol scenecrdt_crdt scenecrdt_transform scenecrdt_runtime
                 scenecrdt_session scenecrdt_net scenecrdt_client)
    if(TARGET ${target})
      list(APPEND build_targets ${target})
    endif()
  endforeach()
  export(TARGETS ${build_targets} NAMESPACE scenecrdt::
         FILE ${PROJECT_BINARY_DIR}/scenecrdtTargets.cmake)
  export(TARGETS scenecrdt_c NAMESPACE scenecrdt:: FILE ${PROJECT_BINARY_DIR}/scenecrdtCTargets.cmake)
  configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/scenecrdtConfig.cmake.in
                                ${PROJECT_BINARY_DIR}/scenecrdtConfig.cmake
                                INSTALL_DESTINATION ${SCENECRDT_INSTALL_CMAKEDIR})
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/scenecrdtConfigVersion.cmake
                                   VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/scenecrdtConfig.cmake
                ${PROJECT_BINARY_DIR}/scenecrdtConfigVersion.cmake
          DESTINATION ${SCENECRDT_INSTALL_CMAKEDIR} COMPONENT dev)
endfunction()
