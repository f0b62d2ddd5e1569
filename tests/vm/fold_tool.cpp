// hucvm_fold: folds the kernel reference's stacks with hucprof's own CallsiteFolder, so the VM
// tier compares per-call-site counts from the kernel (kprobe event + hist trigger keyed on the
// stack) with hucprof's metrics through exactly the folding code the daemon runs.
//
// Input (stdin or FILE), one stack per line, '#' comments and blank lines ignored:
//   COUNT BYTES DIRECTION FRAME;FRAME;...;FRAME
// COUNT and BYTES are non-negative integers, DIRECTION is to_user, from_user or - (not known,
// e.g. a sub-check), frames are exact kernel symbol names, leaf first (the probed function's
// immediate caller first, or the probed check function itself), "[unknown]" for an address that
// did not symbolize.
//
// Output, one line per distinct (callsite, syscall, direction), sorted, tab-separated:
//   CALLSITE SYSCALL DIRECTION COUNT BYTES
// Exit 0, or 2 on a malformed line (with its number on stderr).
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/symbols/callsite_folder.h"
#include "core/symbols/folding_rules.h"

namespace {

struct Totals {
  uint64_t count = 0;
  uint64_t bytes = 0;
};

std::vector<std::string> split_frames(const std::string& text) {
  std::vector<std::string> frames;
  std::string::size_type start = 0;
  while (start <= text.size()) {
    auto end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) frames.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return frames;
}

int run(std::istream& in) {
  const hucprof::CallsiteFolder folder(hucprof::FoldingRules::defaults());
  std::map<std::tuple<std::string, std::string, std::string>, Totals> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    uint64_t count = 0, bytes = 0;
    std::string direction, frames_text, extra;
    if (!(fields >> count >> bytes >> direction >> frames_text) || (fields >> extra) ||
        (direction != "to_user" && direction != "from_user" && direction != "-")) {
      std::cerr << "hucvm_fold: line " << number
                << ": expected COUNT BYTES DIRECTION FRAMES: " << line << "\n";
      return 2;
    }
    auto frames = split_frames(frames_text);
    if (frames.empty()) {
      std::cerr << "hucvm_fold: line " << number << ": no frames\n";
      return 2;
    }
    hucprof::FoldedCallsite folded = folder.fold(frames);
    Totals& t = out[{folded.callsite, folded.syscall, direction}];
    t.count += count;
    t.bytes += bytes;
  }
  for (const auto& [key, t] : out) {
    const auto& [callsite, syscall, direction] = key;
    std::cout << callsite << '\t' << syscall << '\t' << direction << '\t' << t.count << '\t'
              << t.bytes << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2) {
    std::cerr << "usage: hucvm_fold [FILE]\n";
    return 2;
  }
  if (argc == 2) {
    std::ifstream file(argv[1]);
    if (!file) {
      std::cerr << "hucvm_fold: cannot open " << argv[1] << "\n";
      return 2;
    }
    return run(file);
  }
  return run(std::cin);
}
