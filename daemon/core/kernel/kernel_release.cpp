#include "core/kernel/kernel_release.h"

#include <charconv>

namespace hucprof {
namespace {

// The number at the start of text, consumed.
std::optional<int> leading_number(std::string_view& text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return value;
}

}  // namespace

std::optional<KernelVersion> parse_kernel_version(std::string_view release) {
  auto major = leading_number(release);
  if (!major || release.empty() || release.front() != '.') return std::nullopt;
  release.remove_prefix(1);
  auto minor = leading_number(release);
  if (!minor) return std::nullopt;
  return KernelVersion{*major, *minor};
}

std::vector<std::string> kernel_config_paths(const std::string& release) {
  return {"/boot/config-" + release, "/usr/lib/modules/" + release + "/config",
          "/lib/modules/" + release + "/config"};
}

std::string checks_off_behaviour(std::string_view release) {
  const auto version = parse_kernel_version(release);
  if (!version) {
    return "with the checks off, __check_object_size is entered and returns at once before 6.15, "
           "and not entered at all from 6.15 (this release does not say which it is)";
  }
  const std::string name = std::to_string(version->major) + "." + std::to_string(version->minor);
  if (version->at_least(6, 15)) {
    return "with the checks off, Linux " + name +
           " does not enter __check_object_size at all (check_object_size() tests the "
           "validate_usercopy_range static key first, since 6.15)";
  }
  return "with the checks off, Linux " + name +
         " still enters __check_object_size, which returns at once (the bypass_usercopy_checks "
         "static key, before 6.15)";
}

}  // namespace hucprof
