#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/config_file.h"
#include "cli/options.h"

namespace hucprof {

// One user-facing setting, reachable both as a flag ("--" + key) and as the same key in the
// YAML config. The table is data so that flags, config keys, validation and --help cannot
// drift apart.
// Whether a changed value takes effect when SIGHUP re-reads the settings, or only at restart
// (what needs re-attaching probes or re-binding the port).
enum class OnReload { Live, Restart };

struct Setting {
  std::string_view key;         // "sample-frequency"
  std::string_view value_name;  // "HZ" in --help; empty: a switch that takes no value
  std::string_view help;
  bool doctor;  // `hucprof doctor` takes it too
  bool record;  // `hucprof record` takes it too (it serves nothing and exports no series)
  OnReload on_reload;
  // Validates a textual value and stores it; returns what is wrong in words, "" when fine.
  std::string (*apply)(std::string_view value, RunOptions& options);
  // The current value as the user would write it (for defaults in --help).
  std::string (*show)(const RunOptions& options);
  // Set for a setting that may be given more than once (a repeated flag, a YAML list): the
  // first value goes through apply (replacing the default), each further one through append.
  std::string (*append)(std::string_view value, RunOptions& options) = nullptr;
  // A one-letter flag `hucprof record` also takes, as perf's (-F for sample-frequency).
  std::string_view record_short = {};
};

std::span<const Setting> settings();
const Setting* find_setting(std::string_view key);

// Applies flattened config entries in file order; the first problem, as "NAME:LINE: words"
// (unknown key, missing value, a list, a bad value), or nullopt.
std::optional<std::string> apply_config_entries(const std::vector<ConfigEntry>& entries,
                                                const std::string& name, RunOptions& options);

struct SettingChange {
  const Setting* setting;
  std::string before, after;  // as the user writes them ("10s")
};

// The settings whose value differs between two option sets, in table order.
std::vector<SettingChange> changed_settings(const RunOptions& before, const RunOptions& after);

}  // namespace hucprof
