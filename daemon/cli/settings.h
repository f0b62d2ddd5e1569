#pragma once
#include <span>
#include <string>
#include <string_view>

#include "cli/options.h"

namespace hucprof {

// One user-facing setting, reachable both as a flag ("--" + key) and as the same key in the
// YAML config. The table is data so that flags, config keys, validation and --help cannot
// drift apart.
struct Setting {
  std::string_view key;         // "sample-frequency"
  std::string_view value_name;  // "HZ" in --help; empty: a switch that takes no value
  std::string_view help;
  bool doctor;  // `hucprof doctor` takes it too
  // Validates a textual value and stores it; returns what is wrong in words, "" when fine.
  std::string (*apply)(std::string_view value, RunOptions& options);
  // The current value as the user would write it (for defaults in --help).
  std::string (*show)(const RunOptions& options);
};

std::span<const Setting> settings();
const Setting* find_setting(std::string_view key);

}  // namespace hucprof
