# SPDX-License-Identifier: Apache-2.0
# Owns the Debian packages (CPack DEB; `bash scripts/package.sh`, docs/PACKAGING.md): one
# package per install component, named here, with their descriptions, maintainer scripts
# (deploy/debian/) and Depends (dpkg-shlibdeps for the binaries, plus the -dev package's
# build dependencies). Included last by the top-level CMakeLists.txt.

# The ABI major of the C library (SC_ABI_VERSION in capi/scenecrdt.h) names its package.
file(STRINGS ${PROJECT_SOURCE_DIR}/capi/scenecrdt.h abi_line REGEX "^#define SC_ABI_VERSION [0-9]+u$")
string(REGEX REPLACE "^#define SC_ABI_VERSION ([0-9]+)u$" "\\1" abi "${abi_line}")
set(SCENECRDT_PACKAGE_SERVER scenecrdt)
set(SCENECRDT_PACKAGE_LIB libscenecrdt${abi})
set(SCENECRDT_PACKAGE_DEV libscenecrdt-dev)
set(SCENECRDT_PACKAGE_MAINTAINER "scenecrdt maintainers <maintainers@scenecrdt.invalid>"
    CACHE STRING "The Maintainer field of the Debian packages")

# Debian wants a copyright file in every package: the Apache-2.0 text (LICENSE).
foreach(component server lib dev)
  string(TOUPPER ${component} upper)
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE RENAME copyright COMPONENT ${component}
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${SCENECRDT_PACKAGE_${upper}})
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME scenecrdt)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR scenecrdt)
set(CPACK_PACKAGE_CONTACT "${SCENECRDT_PACKAGE_MAINTAINER}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
# Only these components become packages; a rule naming another one is not packaged (and
# scripts/package_test.sh fails, as every installed file must be in a package).
set(CPACK_COMPONENTS_ALL server lib dev)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A shlibs file for the package holding a shared library (libscenecrdt1): packages built
# against it get `libscenecrdt1 (>= version)` from their own dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Executables and shared libraries stripped (static archives keep their symbols).
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_SERVER_PACKAGE_NAME ${SCENECRDT_PACKAGE_SERVER})
set(CPACK_DEBIAN_SERVER_PACKAGE_SECTION net)
# procps: /bin/kill for the units' ExecReload (SIGHUP).
set(CPACK_DEBIAN_SERVER_PACKAGE_DEPENDS "procps")
set(CPACK_DEBIAN_SERVER_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_SERVER_PACKAGE_SUGGESTS "redis-server")
# conffiles: dpkg keeps an operator's edits of /etc/scenecrdt/scenecrdt.toml on upgrade.
file(WRITE ${PROJECT_BINARY_DIR}/deploy/debian/conffiles "/etc/scenecrdt/scenecrdt.toml\n")
set(CPACK_DEBIAN_SERVER_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm ${PROJECT_BINARY_DIR}/deploy/debian/conffiles)
set(CPACK_DEBIAN_SERVER_DESCRIPTION
    "scene server and command line of scenecrdt
`scenecrdt serve` keeps 3D scenes (Decentraland SDK7 CRDT messages) in SQLite or Redis and
relays every winning change to the clients that joined them, over framed TCP and WebSocket,
with a live 3D viewer in the browser. Ships the systemd units scenecrdt.service and
scenecrdt@.service and their configuration /etc/scenecrdt/scenecrdt.toml. The same binary replays, converts, records and load-tests streams.")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${SCENECRDT_PACKAGE_LIB})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_DESCRIPTION
    "scenecrdt C ABI: replicated 3D scene transforms for engines
libscenecrdt.so.${abi}: the CRDT store, scene graph and world matrices of scenecrdt, and its
network client, behind a stable C ABI for engines and other languages (C#, Python ctypes,
GDExtension).")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${SCENECRDT_PACKAGE_DEV})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
# The CMake package's find_dependency() calls (cmake/scenecrdtConfig.cmake.in) and pkg-config.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "libglm-dev, libflatbuffers-dev, libssl-dev, libzstd-dev, pkg-config")
set(CPACK_COMPONENT_DEV_DEPENDS lib)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "scenecrdt development files: headers, C++ libraries, CMake package, pkg-config
The C ABI header <scenecrdt/scenecrdt.h> with scenecrdt.pc, the C++20 libraries
scenecrdt::protocol, scenecrdt::runtime and scenecrdt::client (static), and the CMake
package: find_package(scenecrdt CONFIG REQUIRED).")

include(CPack)
