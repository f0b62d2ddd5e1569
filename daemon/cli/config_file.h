#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"

namespace hucprof {

// One leaf of the YAML config. Nested mappings are flattened with '.', so
// `web: {listen-address: ":9478"}` and `web.listen-address: ":9478"` read the same.
struct ConfigEntry {
  enum class Kind { Scalar, Null, Sequence };
  std::string key;
  int line = 0;  // 1-based line of the key, for messages
  Kind kind = Kind::Scalar;
  std::string value;  // the scalar text when kind == Scalar
  // kind == Sequence: the items when every one is a scalar (a repeatable setting's values)
  std::vector<std::string> items = {};
};

// Reads and flattens the config file; the error, if any, is one line naming the file (and the
// line: "FILE:LINE: words"). Keys are not checked against the known settings here.
Result<std::vector<ConfigEntry>> read_config_file(const std::string& path);

// The same for text already read; `name` stands for the file in messages.
Result<std::vector<ConfigEntry>> parse_config_text(std::string_view text, const std::string& name);

}  // namespace hucprof
