// argv as a whole (words separated by NUL bytes): CLI11, our flag table, --capabilities.keep,
// --log.format, --interval, ... A command line is either accepted, help (exit 0) or a usage
// error (exit 2) in one line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/options.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"hucprof"};
  std::string word;
  for (size_t i = 0; i < size && words.size() < 32; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  if (!word.empty()) words.push_back(word);
  // --config reads a file: keep the fuzzer to the command line itself (config_fuzz has the file).
  for (const std::string& w : words) {
    if (w.rfind("--config", 0) == 0) return 0;
  }
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  argv.push_back(nullptr);

  const hucprof::ParseOutcome outcome =
      hucprof::parse_command_line(static_cast<int>(words.size()), argv.data());
  if (outcome.command) {
    HUC_FUZZ_CHECK(outcome.exit_code == 0, "a command comes with exit code 0");
    return 0;
  }
  HUC_FUZZ_CHECK(outcome.exit_code == 0 || outcome.exit_code == 2, "exit code is 0 or 2");
  HUC_FUZZ_CHECK(!outcome.message.empty(), "a message says why");
  if (outcome.exit_code == 2) {
    HUC_FUZZ_CHECK(hucprof::one_line(outcome.message), "usage error is one line");
  }
  return 0;
}
