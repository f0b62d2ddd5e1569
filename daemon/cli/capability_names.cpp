#include "cli/capability_names.h"

#include <sys/capability.h>

#include <algorithm>
#include <cctype>

namespace hucprof {
namespace {

constexpr int kMaxCapability = 63;  // a CapabilityMask has 64 bits

std::string capability_name(int cap) {
  char* name = cap_to_name(static_cast<cap_value_t>(cap));
  if (name == nullptr) return "cap_" + std::to_string(cap);
  std::string text(name);
  cap_free(name);
  return text;
}

std::string joined(CapabilityMask mask, std::string_view separator) {
  std::string out;
  for (int cap = 0; cap <= kMaxCapability; ++cap) {
    if (!(mask & capability_bit(cap))) continue;
    if (!out.empty()) out += separator;
    out += capability_name(cap);
  }
  return out;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

Result<CapabilityKeep> parse_capability_keep(std::string_view text) {
  std::string lower(trimmed(text));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "all") return CapabilityKeep{true, 0};
  if (lower == "none") return CapabilityKeep{false, 0};
  if (lower.empty()) return Error{"empty (a list such as cap_syslog,cap_bpf, or all, or none)"};
  CapabilityKeep keep;
  std::string_view rest = lower;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view word = trimmed(rest.substr(0, comma));
    std::string name(word);
    if (name.rfind("cap_", 0) != 0) name = "cap_" + name;
    // Names only: libcap would also take numbers, which say nothing to whoever reads the config.
    const bool letters = std::all_of(name.begin(), name.end(),
                                     [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
    if (word.empty()) return Error{"empty name in the list \"" + std::string(trimmed(text)) + "\""};
    cap_value_t value = 0;
    if (!letters || cap_from_name(name.c_str(), &value) != 0 || value < 0 ||
        value > kMaxCapability) {
      return Error{
          "\"" + std::string(word) +
          "\" is not a capability name (e.g. cap_syslog, cap_bpf, cap_perfmon; or all, none)"};
    }
    keep.caps |= capability_bit(value);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return keep;
}

std::string format_capability_keep(const CapabilityKeep& keep) {
  if (keep.all) return "all";
  if (keep.caps == 0) return "none";
  return joined(keep.caps, ",");
}

std::string capability_names(CapabilityMask mask) {
  return mask == 0 ? "none" : joined(mask, ", ");
}

}  // namespace hucprof
