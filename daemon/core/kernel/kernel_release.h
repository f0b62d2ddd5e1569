#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hucprof {

// What `uname -r` tells about the running kernel: its version, and where distributions put its
// files.
struct KernelVersion {
  int major = 0;
  int minor = 0;

  bool at_least(int want_major, int want_minor) const {
    return major > want_major || (major == want_major && minor >= want_minor);
  }
};

// "6.12.117+deb13-amd64" -> 6.12; nullopt when the release does not start with MAJOR.MINOR.
std::optional<KernelVersion> parse_kernel_version(std::string_view release);

// Where the kernel config of `release` may be, in the order tried: /boot/config-<release>
// (Debian up to 6.x's linux-image packages), /usr/lib/modules/<release>/config (Debian's split
// 7.x packages: linux-base-<release>), /lib/modules/<release>/config (the same without merged
// /usr).
std::vector<std::string> kernel_config_paths(const std::string& release);

// What `hardened_usercopy=off` leaves of a check on this kernel. Since 6.15 check_object_size()
// (include/linux/ucopysize.h) tests the validate_usercopy_range static key before calling
// __check_object_size, which is then not entered at all; before, __check_object_size is entered
// and returns at its bypass_usercopy_checks key. Words for doctor and the log.
std::string checks_off_behaviour(std::string_view release);

}  // namespace hucprof
