#include "export/pprof/pid_label.h"

#include "export/pprof/pprof_format.h"

namespace hucprof {

std::string pid_label_problem(const pprof::Profile& profile, const pprof::Sample& sample) {
  int pids = 0;
  for (const auto& label : sample.label()) {
    if (label.key() <= 0 || label.key() >= profile.string_table_size() ||
        profile.string_table(static_cast<int>(label.key())) != kLabelPid) {
      continue;
    }
    if (++pids > 1) return "a sample has two pid labels";
    if (label.str() != 0) return "a sample's pid label has a string value, not a number";
    if (label.num() <= 0) {
      return "a sample has pid " + std::to_string(label.num()) + ", not a process id";
    }
  }
  return "";
}

}  // namespace hucprof
