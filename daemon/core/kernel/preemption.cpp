#include "core/kernel/preemption.h"

#include <array>

#include "core/kernel/kernel_params.h"

namespace hucprof {
namespace {

constexpr std::array<std::string_view, 4> kDynamicModels = {"none", "voluntary", "full", "lazy"};

bool config_is_y(std::optional<std::string_view> v) { return v && *v == "y"; }

bool known_dynamic_model(std::string_view model) {
  for (std::string_view m : kDynamicModels) {
    if (m == model) return true;
  }
  return false;
}

// The word in parentheses of "none voluntary (full) lazy".
std::optional<std::string_view> current_in(std::string_view text) {
  const size_t open = text.find('('), close = text.find(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  return text.substr(open + 1, close - open - 1);
}

// The model a kernel was built for: its Kconfig choice.
std::optional<std::string_view> built_model(std::string_view config) {
  if (config_is_y(config_option(config, "CONFIG_PREEMPT_LAZY"))) return "lazy";
  if (config_is_y(config_option(config, "CONFIG_PREEMPT"))) return "full";
  if (config_is_y(config_option(config, "CONFIG_PREEMPT_VOLUNTARY"))) return "voluntary";
  if (config_is_y(config_option(config, "CONFIG_PREEMPT_NONE"))) return "none";
  return std::nullopt;
}

}  // namespace

Preemption evaluate_preemption(std::optional<std::string_view> config, std::string_view cmdline,
                               std::optional<std::string_view> sched_preempt) {
  Preemption out{"unknown", true, ""};
  if (config && config_is_y(config_option(*config, "CONFIG_PREEMPT_RT"))) {
    out = {"rt", true, "CONFIG_PREEMPT_RT=y"};
  } else if (auto current = sched_preempt ? current_in(*sched_preempt) : std::nullopt;
             current && known_dynamic_model(*current)) {
    out = {std::string(*current), true, "/sys/kernel/debug/sched/preempt"};
  } else if (config && config_is_y(config_option(*config, "CONFIG_PREEMPT_DYNAMIC"))) {
    auto param = find_kernel_param(cmdline, "preempt");
    if (param && known_dynamic_model(*param)) {
      out = {std::string(*param), true, "the boot parameter preempt=" + std::string(*param)};
    } else if (auto built = built_model(*config)) {
      out = {std::string(*built), true, "the kernel config's default (CONFIG_PREEMPT_DYNAMIC)"};
    }
  } else if (config) {
    if (auto built = built_model(*config)) out = {std::string(*built), true, "the kernel config"};
  }
  if (out.model == "unknown") {
    out.reason = config ? "the kernel config names no preemption model"
                        : "no kernel config and no /sys/kernel/debug/sched/preempt";
    return out;
  }
  out.programs_preemptible = out.model == "full" || out.model == "lazy" || out.model == "rt";
  // Without preemptible RCU, rcu_read_lock() disables preemption for the program's run.
  if (out.programs_preemptible && config &&
      config_option(*config, "CONFIG_PREEMPT_RCU") == std::optional<std::string_view>("n")) {
    out.programs_preemptible = false;
    out.reason += "; CONFIG_PREEMPT_RCU is not set";
  }
  return out;
}

}  // namespace hucprof
