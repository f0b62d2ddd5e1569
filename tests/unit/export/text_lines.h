#pragma once
#include <sstream>
#include <string>
#include <vector>

// The exposition text as lines, so tests can ask for exact lines with gmock's Contains().
inline std::vector<std::string> text_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}
