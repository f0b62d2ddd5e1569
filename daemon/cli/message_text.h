#pragma once
#include <cctype>
#include <string>

namespace hucprof {

// Messages are lowercase, one line; library texts ("No such file or directory") start with a
// capital, so they are lowered before being appended.
inline std::string lowercase_first(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

}  // namespace hucprof
