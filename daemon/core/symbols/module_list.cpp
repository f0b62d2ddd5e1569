#include "core/symbols/module_list.h"

#include <array>

namespace hucprof {

std::string module_list_signature(std::string_view proc_modules) {
  // "name size refcount users state address [taint]"
  constexpr std::array<size_t, 4> kKept = {0, 1, 4, 5};
  std::string out;
  while (!proc_modules.empty()) {
    const size_t eol = proc_modules.find('\n');
    std::string_view line = proc_modules.substr(0, eol);
    proc_modules.remove_prefix(eol == std::string_view::npos ? proc_modules.size() : eol + 1);
    size_t field = 0, kept = 0;
    while (!line.empty() && kept < kKept.size()) {
      const size_t start = line.find_first_not_of(' ');
      if (start == std::string_view::npos) break;
      line.remove_prefix(start);
      const size_t end = line.find(' ');
      const std::string_view token = line.substr(0, end);
      line.remove_prefix(end == std::string_view::npos ? line.size() : end);
      if (field++ == kKept[kept]) {
        out.append(token).push_back(' ');
        ++kept;
      }
    }
    if (field > 0) out.push_back('\n');
  }
  return out;
}

}  // namespace hucprof
