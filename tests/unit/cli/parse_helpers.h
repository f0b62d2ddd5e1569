#pragma once
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "cli/options.h"
#include "config_file_fixture.h"

namespace hucprof {

// parse_command_line over a list of words, "hucprof" prepended as argv[0].
inline ParseOutcome parse(std::vector<std::string> words) {
  words.insert(words.begin(), "hucprof");
  std::vector<const char*> argv;
  for (const auto& word : words) argv.push_back(word.c_str());
  argv.push_back(nullptr);
  return parse_command_line(static_cast<int>(words.size()), argv.data());
}

// Parses and expects a command; returns its options (defaults on failure, after reporting it).
inline RunOptions parse_run(std::vector<std::string> words) {
  const ParseOutcome outcome = parse(std::move(words));
  if (!outcome.command) {
    ADD_FAILURE() << "exit " << outcome.exit_code << ": " << outcome.message;
    return {};
  }
  return outcome.command->run;
}

// Parses and expects a usage error (exit 2); returns the message.
inline std::string parse_error(std::vector<std::string> words) {
  const ParseOutcome outcome = parse(std::move(words));
  EXPECT_FALSE(outcome.command.has_value());
  EXPECT_EQ(outcome.exit_code, 2);
  EXPECT_EQ(outcome.message.find('\n'), std::string::npos) << "one line: " << outcome.message;
  return outcome.message;
}

}  // namespace hucprof
