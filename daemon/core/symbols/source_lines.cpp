#include "core/symbols/source_lines.h"

namespace hucprof {

std::strong_ordering compare_source(const SourceLinesPtr& a, const SourceLinesPtr& b) {
  if (a == b) return std::strong_ordering::equal;
  static const SourceLines kNone;
  const SourceLines& left = a ? *a : kNone;
  const SourceLines& right = b ? *b : kNone;
  return left <=> right;
}

std::string file_line(const SourceLine& line) {
  if (line.line == 0) return line.file;
  return line.file + ":" + std::to_string(line.line);
}

}  // namespace hucprof
