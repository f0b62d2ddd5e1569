#include "core/file_text.h"

#include <fstream>
#include <sstream>

namespace hucprof {

std::optional<std::string> read_file_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace hucprof
