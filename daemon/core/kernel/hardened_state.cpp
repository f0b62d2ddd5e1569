#include "core/kernel/hardened_state.h"

#include "core/kernel/kernel_params.h"

namespace hucprof {
namespace {

constexpr std::string_view kCompiledIn = "CONFIG_HARDENED_USERCOPY";
constexpr std::string_view kDefaultOn = "CONFIG_HARDENED_USERCOPY_DEFAULT_ON";
constexpr std::string_view kBootParam = "hardened_usercopy";

bool config_built(std::optional<std::string_view> v) { return v && (*v == "y" || *v == "m"); }

// The default when no valid boot parameter decides, and the words for it.
HardenedUsercopyState build_default(std::optional<std::string_view> config) {
  if (!config) return {true, "kernel config unavailable, assuming the built-in default (on)"};
  std::optional<std::string_view> default_on = config_option(*config, kDefaultOn);
  if (!default_on)
    return {true, "default on (this kernel has no CONFIG_HARDENED_USERCOPY_DEFAULT_ON)"};
  if (config_built(default_on)) return {true, "default on (CONFIG_HARDENED_USERCOPY_DEFAULT_ON=y)"};
  return {false, "default off (CONFIG_HARDENED_USERCOPY_DEFAULT_ON is not set)"};
}

}  // namespace

HardenedUsercopyState evaluate_hardened_usercopy(std::optional<std::string_view> kernel_config,
                                                 std::string_view cmdline,
                                                 bool check_symbol_present) {
  std::string prefix;
  if (kernel_config) {
    std::optional<std::string_view> compiled = config_option(*kernel_config, kCompiledIn);
    if (!config_built(compiled)) {
      return {false, compiled ? "CONFIG_HARDENED_USERCOPY is not set"
                              : "CONFIG_HARDENED_USERCOPY is not in the kernel config"};
    }
    prefix = "CONFIG_HARDENED_USERCOPY=y";
    // The config wins (it describes the running kernel); a missing symbol more likely means
    // kallsyms could not be read, but say so.
    if (!check_symbol_present) prefix += " (though __check_object_size is not in kallsyms)";
  } else {
    if (!check_symbol_present) {
      return {false,
              "kernel config unavailable and __check_object_size is not in kallsyms: not "
              "compiled in"};
    }
    prefix = "__check_object_size is in kallsyms";
  }

  std::optional<std::string_view> param = find_kernel_param(cmdline, kBootParam);
  std::string param_text = param ? "hardened_usercopy=" + std::string(*param) : "";
  if (param) {
    if (std::optional<bool> on = kernel_strtobool(*param)) {
      return {*on, prefix + ", " + param_text + " on the kernel command line"};
    }
  }
  HardenedUsercopyState state = build_default(kernel_config);
  state.reason =
      prefix + ", " + state.reason +
      (param ? ", invalid " + param_text + " ignored by the kernel" : ", no boot parameter");
  return state;
}

}  // namespace hucprof
