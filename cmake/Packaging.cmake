# Debian package of hucprof:   cmake --build BUILD && (cd BUILD && cpack -G DEB)
#
#   /usr/bin/hucprof                               the daemon (install(TARGETS hucprof) in daemon/)
#   /lib/systemd/system/hucprof.service            the unit — neither enabled nor started
#   /etc/hucprof/hucprof.yaml                      default configuration (a conffile)
#   /usr/share/hucprof/web-config.yaml.example     TLS + basic auth example (not active)
#   /usr/share/hucprof/dashboards/*.json           Grafana dashboards
#   /usr/share/hucprof/prometheus/                 scrape config example, recording + alert rules
#   /usr/share/hucprof/grafana/provisioning/       Grafana data source + dashboard provisioning
#   /usr/share/hucprof/kubernetes/                 DaemonSet, ServiceMonitor, Containerfile
#   /usr/share/doc/hucprof/                        README(s)
#
# Depends is computed from the binary's shared libraries (dpkg-shlibdeps). The maintainer
# scripts only reload systemd, restart an already-running hucprof on upgrade, and stop it on
# removal: installing the package starts and enables nothing.

set(HUC_DEPLOY_DIR ${PROJECT_SOURCE_DIR}/deploy)

# Files that belong to the system rather than to the prefix (/etc, /lib/systemd). They go to
# their real place when installing to /usr (what cpack does, into its staging DESTDIR) and
# under the prefix otherwise, so `cmake --install BUILD --prefix /tmp/x` never writes /etc.
# Decided at install time, because cpack installs with prefix /usr whatever was configured.
function(huc_install_system_files dest)
  cmake_parse_arguments(ARG "" "RENAME" "FILES" ${ARGN})
  set(rename "")
  if(ARG_RENAME)
    set(rename "RENAME \"${ARG_RENAME}\"")
  endif()
  set(files "")
  foreach(f IN LISTS ARG_FILES)
    string(APPEND files " \"${f}\"")
  endforeach()
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(_huc_root \"\")
    else()
      set(_huc_root \"\${CMAKE_INSTALL_PREFIX}\")
    endif()
    file(INSTALL DESTINATION \"\${_huc_root}${dest}\" TYPE FILE PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ ${rename} FILES ${files})
  ")
endfunction()

huc_install_system_files(/lib/systemd/system FILES ${HUC_DEPLOY_DIR}/hucprof.service)
huc_install_system_files(/etc/hucprof FILES ${HUC_DEPLOY_DIR}/hucprof.yaml)

# Shared data: relative to the prefix (/usr in the package).
file(GLOB HUC_DASHBOARDS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/dashboards/*.json)
install(FILES ${HUC_DASHBOARDS} DESTINATION share/hucprof/dashboards)
install(FILES ${HUC_DEPLOY_DIR}/prometheus/prometheus.yml ${HUC_DEPLOY_DIR}/prometheus/hucprof.rules.yml
        DESTINATION share/hucprof/prometheus)
install(DIRECTORY ${HUC_DEPLOY_DIR}/grafana/provisioning DESTINATION share/hucprof/grafana)
# Opt-in only: a file under /usr/share changes no setting until the admin copies it.
install(FILES ${HUC_DEPLOY_DIR}/web-config.yaml.example DESTINATION share/hucprof)
install(FILES ${HUC_DEPLOY_DIR}/sysctl/60-hucprof-perf-events.conf DESTINATION share/hucprof/sysctl)
install(FILES ${HUC_DEPLOY_DIR}/kubernetes/daemonset.yaml ${HUC_DEPLOY_DIR}/kubernetes/servicemonitor.yaml
              ${HUC_DEPLOY_DIR}/kubernetes/Containerfile
        DESTINATION share/hucprof/kubernetes)
install(FILES ${HUC_DEPLOY_DIR}/README.md DESTINATION share/doc/hucprof RENAME deploy.md)
if(EXISTS ${PROJECT_SOURCE_DIR}/README.md)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/hucprof)
endif()

# ---------------------------------------------------------------------------- CPack
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hucprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "hucprof maintainers <maintainers@hucprof.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "hardened-usercopy profiler: CPU cost of CONFIG_HARDENED_USERCOPY per kernel call site")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)
set(CPACK_PACKAGE_CHECKSUM SHA256)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # hucprof_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends from the binary's DT_NEEDED libraries (libbpf1, libprometheus-cpp-core, libssl3,
# libcrypt1, libsystemd0, ...): OpenSSL is linked, not loaded by name at run time.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(CMAKE_CROSSCOMPILING AND CMAKE_SYSTEM_PROCESSOR STREQUAL "aarch64")
  # hucprof_<version>_arm64.deb from the cross build (scripts/build.sh --arch arm64). Depends:
  # dpkg-shlibdeps reads the arm64 libraries and their symbols files from the sysroot's own
  # dpkg database (scripts/arm64-sysroot.sh), not from the host's.
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE arm64)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
      ${CMAKE_SYSROOT}/usr/lib/aarch64-linux-gnu ${CMAKE_SYSROOT}/lib/aarch64-linux-gnu)
  set(HUC_CPACK_CONFIG ${CMAKE_CURRENT_BINARY_DIR}/cpack-cross.cmake)
  file(WRITE ${HUC_CPACK_CONFIG}
       "set(ENV{DPKG_ADMINDIR} \"${CMAKE_SYSROOT}/var/lib/hucprof-dpkg\")\n")
  set(CPACK_PROJECT_CONFIG_FILE ${HUC_CPACK_CONFIG})
endif()
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
# The example scrape config and rules are for a Prometheus server, usually on another machine.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus")
# Extended description (CPack puts the summary above it and indents it); the empty line
# becomes a paragraph break.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"hucprof attributes the CPU time the Linux kernel spends in its hardened-usercopy
checks (__check_object_size and the slab, vmalloc, stack and text checks it
calls) to the kernel call sites and system calls that asked for the copy, and
serves the result as Prometheus metrics. It samples with perf events where
probes are refused, and counts every check with fentry/kprobe probes where the
kernel allows them.

The package ships a hardened systemd unit (not enabled), Prometheus rules,
Grafana dashboards and a Kubernetes DaemonSet. See /usr/share/doc/hucprof.")

# conffiles: dpkg keeps local edits of the configuration across upgrades (and asks).
set(HUC_DEBIAN_DIR ${CMAKE_CURRENT_BINARY_DIR}/debian-control)
file(MAKE_DIRECTORY ${HUC_DEBIAN_DIR})
file(WRITE ${HUC_DEBIAN_DIR}/conffiles "/etc/hucprof/hucprof.yaml\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${HUC_DEBIAN_DIR}/conffiles
    ${HUC_DEPLOY_DIR}/debian/postinst
    ${HUC_DEPLOY_DIR}/debian/prerm
    ${HUC_DEPLOY_DIR}/debian/postrm)
# Maintainer scripts 0755, conffiles 0644, whatever the checkout's modes are.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)

include(CPack)
