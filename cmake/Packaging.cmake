# What the Debian package installs (debian/rules runs `cmake --install BUILD --prefix /usr` into
# the package; scripts/build-deb.sh builds it):
#
#   /usr/bin/hucprof                               the daemon (install(TARGETS hucprof) in daemon/)
#   /usr/share/man/man1/hucprof*.1                 a man page per command (docs/man/, help2man)
#   /lib/systemd/system/hucprof.service            the unit — neither enabled nor started
#   /etc/hucprof/hucprof.yaml                      default configuration (a conffile)
#   /usr/share/hucprof/web-config.yaml.example     TLS + basic auth example (not active)
#   /usr/share/hucprof/dashboards/*.json           Grafana dashboards
#   /usr/share/hucprof/prometheus/                 scrape config example, recording + alert rules
#   /usr/share/hucprof/grafana/provisioning/       Grafana data source + dashboard provisioning
#   /usr/share/hucprof/kubernetes/                 DaemonSet, ServiceMonitor, Containerfile
#   /usr/share/hucprof/parca/, alloy/              fleet-wide profile scraping (Parca, Alloy)
#   /usr/share/doc/hucprof/                        README(s), docs/*.md beside them
#
# Depends, the maintainer scripts (dh_installsystemd) and the conffiles (everything under /etc)
# are debhelper's (debian/).

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
              ${HUC_DEPLOY_DIR}/kubernetes/scrapers-rbac.yaml ${HUC_DEPLOY_DIR}/kubernetes/Containerfile
        DESTINATION share/hucprof/kubernetes)
install(FILES ${HUC_DEPLOY_DIR}/parca/parca.yaml DESTINATION share/hucprof/parca)
install(FILES ${HUC_DEPLOY_DIR}/alloy/hucprof.alloy DESTINATION share/hucprof/alloy)
file(GLOB HUC_MAN_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(FILES ${HUC_MAN_PAGES} DESTINATION share/man/man1)
install(FILES ${HUC_DEPLOY_DIR}/README.md DESTINATION share/doc/hucprof RENAME deploy.md)
if(EXISTS ${PROJECT_SOURCE_DIR}/README.md)
  install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/hucprof)
endif()
# The README's links lead into docs/: the same relative paths beside it.
file(GLOB HUC_DOCS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${HUC_DOCS} ${PROJECT_SOURCE_DIR}/docs/flame-graph.png DESTINATION share/doc/hucprof/docs)
