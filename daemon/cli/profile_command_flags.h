#pragma once
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace hucprof {

// The flags `hucprof record` and `hucprof report` have of their own (record also takes the run
// settings that apply without a server: options.cpp adds those). Registered on the subcommand,
// then checked and copied into the options once CLI11 has parsed.

struct RecordFlags {
  CLI::Option* duration = nullptr;
  std::string duration_text;
  std::string output = RecordOptions().output;
  std::vector<std::string> command;
  bool all_cpus = false;
  CLI::Option* pids = nullptr;
  std::string pids_text;
  CLI::Option* cpus = nullptr;
  std::string cpus_text;
  CLI::Option* cgroup = nullptr;
  std::string cgroup_text;
  bool only_command = false;
};
void add_record_flags(CLI::App* app, RecordFlags& flags);
// The problem in words (naming the flag), or nullopt.
std::optional<std::string> apply_record_flags(const RecordFlags& flags, RecordOptions& record);

struct ReportFlags {
  std::string input = ReportOptions().input;
  CLI::Option* flamegraph = nullptr;
  std::string flamegraph_path;
  CLI::Option* sort = nullptr;
  std::string sort_text;
  CLI::Option* percent_limit = nullptr;
  std::string percent_limit_text;
  bool folded = false;
  CLI::Option* diff = nullptr;
  std::string diff_path;
};
void add_report_flags(CLI::App* app, ReportFlags& flags);
std::optional<std::string> apply_report_flags(const ReportFlags& flags, ReportOptions& report);

}  // namespace hucprof
