# The hardening flags Debian's dpkg-buildflags gives with DEB_BUILD_MAINT_OPTIONS=hardening=+all
# (PIE is gcc's default on Debian), in every build and not only in the package's: hucprof runs
# as root on every node, and the binary the tests drive is the one scripts/build-deb.sh packages
# from the same tree. The package's own full build (debian/rules without HUC_BUILD_DIR) gets
# them from dpkg-buildflags too; twice is harmless.
option(HUCPROF_HARDENING "stack protector, fortified libc calls, full RELRO/BIND_NOW, CET/BTI" ON)
if(HUCPROF_HARDENING AND NOT HUCPROF_FUZZ AND NOT HUCPROF_SANITIZE)
  add_compile_options(-fstack-protector-strong -fstack-clash-protection -Wformat
                      -Werror=format-security)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
    add_compile_options(-fcf-protection)
  elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
    add_compile_options(-mbranch-protection=standard)
  endif()
  # _FORTIFY_SOURCE needs the optimizer; a BUILD_TYPE=None build (dpkg, tests/vm/arm64/ci.sh at
  # -O0) brings its own flags.
  add_compile_definitions($<$<CONFIG:Release,RelWithDebInfo,MinSizeRel>:_FORTIFY_SOURCE=2>)
  add_link_options(-Wl,-z,relro -Wl,-z,now)
endif()
