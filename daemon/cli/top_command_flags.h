#pragma once
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/options.h"

namespace hucprof {

// The flags `hucprof top` has of its own (it also takes the settings `record` takes, but
// --interval: its drains follow --delay). Registered on the subcommand, then checked and copied
// into TopOptions once CLI11 has parsed.
struct TopFlags {
  CLI::Option* from = nullptr;
  std::string from_url;
  CLI::Option* ca_file = nullptr;
  std::string ca_file_path;
  CLI::Option* delay = nullptr;
  std::string delay_text;
  CLI::Option* iterations = nullptr;
  std::string iterations_text;
  bool cumulative = false;
};
void add_top_flags(CLI::App* app, TopFlags& flags);
// The problem in words (naming the flag), or nullopt.
std::optional<std::string> apply_top_flags(const TopFlags& flags, TopOptions& top);

}  // namespace hucprof
