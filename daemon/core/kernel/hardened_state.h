#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hucprof {

struct HardenedUsercopyState {
  bool enabled = false;
  std::string reason;  // in words: "CONFIG_HARDENED_USERCOPY=y, default on, no boot parameter"
};

// Decides whether check_object_size() runs on this kernel from the kernel config text (nullopt:
// config unavailable), the kernel command line and whether __check_object_size exists in
// kallsyms. Rules: not compiled in → off; `hardened_usercopy=` on the command line (kstrtobool
// syntax: 1/y/on → on, 0/n/off → off) wins; else CONFIG_HARDENED_USERCOPY_DEFAULT_ON when the
// config has that option (6.x+), else on.
HardenedUsercopyState evaluate_hardened_usercopy(std::optional<std::string_view> kernel_config,
                                                 std::string_view cmdline,
                                                 bool check_symbol_present);

}  // namespace hucprof
