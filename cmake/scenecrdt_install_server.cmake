# SPDX-License-Identifier: Apache-2.0
# Owns the install rules of the server package (component server, the Debian package
# scenecrdt; docs/PACKAGING.md): the viewer's assets in share/scenecrdt/web, where an
# installed `scenecrdt serve` looks by default (tools/cli/serve/cmd_serve.cc DefaultWebRoot), the
# systemd units (deploy/systemd/), the sysusers.d file of their system user and the config
# file deploy/scenecrdt.toml (/etc/scenecrdt/scenecrdt.toml for the /usr prefix of the
# package, a conffile; PREFIX/etc/scenecrdt otherwise). The command
# line's own rule is in tools/CMakeLists.txt.

# The viewer's assets: what scripts/build_web.sh writes (build/web), installed when present.
set(SCENECRDT_WEB_DIR ${PROJECT_SOURCE_DIR}/build/web
    CACHE PATH "The viewer's built assets (bash scripts/build_web.sh) to install")
option(SCENECRDT_REQUIRE_WEB "Fail to configure when SCENECRDT_WEB_DIR holds no viewer" OFF)
option(SCENECRDT_INSTALL_SYSTEMD "Install the systemd units and the sysusers.d file" ON)

function(scenecrdt_install_server)
  set(web_files view.html viewer.js scenecrdt.js scenecrdt.wasm)
  set(missing "")
  foreach(f IN LISTS web_files)
    if(NOT EXISTS ${SCENECRDT_WEB_DIR}/${f})
      list(APPEND missing ${f})
    endif()
  endforeach()
  if(missing AND SCENECRDT_REQUIRE_WEB)
    message(FATAL_ERROR "SCENECRDT_REQUIRE_WEB: ${SCENECRDT_WEB_DIR} lacks ${missing}: "
                        "build the viewer first (bash scripts/build_web.sh)")
  endif()
  set(webdir ${CMAKE_INSTALL_DATADIR}/scenecrdt/web)
  # The folder is read at install time: a viewer built after configuring is installed too.
  install(DIRECTORY ${SCENECRDT_WEB_DIR}/ DESTINATION ${webdir} COMPONENT server OPTIONAL
          FILES_MATCHING PATTERN "*.html" PATTERN "*.js" PATTERN "*.wasm" PATTERN "*.map")
  install(CODE "
    if(NOT EXISTS \"${SCENECRDT_WEB_DIR}/view.html\")
      message(WARNING \"scenecrdt: the viewer's assets are not installed (no ${SCENECRDT_WEB_DIR}/view.html): build them with bash scripts/build_web.sh, or pass --web-root to serve\")
    endif()" COMPONENT server)

  # /etc for the package's /usr prefix (GNUInstallDirs' rule); else under the prefix, so that
  # `cmake --install --prefix DIR` never writes outside DIR.
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    set(confdir /etc/scenecrdt)
  else()
    set(confdir ${CMAKE_INSTALL_SYSCONFDIR}/scenecrdt)
  endif()
  install(FILES ${PROJECT_SOURCE_DIR}/deploy/scenecrdt.toml DESTINATION ${confdir}
          COMPONENT server)

  if(SCENECRDT_INSTALL_SYSTEMD)
    set(SCENECRDT_BIN ${CMAKE_INSTALL_FULL_BINDIR}/scenecrdt)
    file(STRINGS ${PROJECT_SOURCE_DIR}/deploy/systemd/service-common.conf common)
    list(FILTER common EXCLUDE REGEX "^#")
    list(JOIN common "\n" SCENECRDT_UNIT_COMMON)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                 ${PROJECT_SOURCE_DIR}/deploy/systemd/service-common.conf)
    foreach(unit scenecrdt.service scenecrdt@.service)
      configure_file(${PROJECT_SOURCE_DIR}/deploy/systemd/${unit}.in
                     ${PROJECT_BINARY_DIR}/deploy/systemd/${unit} @ONLY)
      install(FILES ${PROJECT_BINARY_DIR}/deploy/systemd/${unit}
              DESTINATION lib/systemd/system COMPONENT server)
    endforeach()
    install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/sysusers.conf
            DESTINATION lib/sysusers.d RENAME scenecrdt.conf COMPONENT server)
  endif()
endfunction()
