#pragma once
#include <cstddef>
#include <string>
#include <string_view>

// yaml-cpp 0.7's node/impl.h trips GCC 12's -Wdangling-pointer once inlined into our code (a
// false positive inside the library's own header, which we cannot change).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#include <yaml-cpp/yaml.h>
#pragma GCC diagnostic pop
#else
#include <yaml-cpp/yaml.h>
#endif

#include "core/base/result.h"

namespace hucprof {

// Bounds for YAML that comes from outside (the config file, the web config file). A settings
// file is a few kilobytes; these bounds are far above that and far below what hurts a node.
struct YamlLimits {
  size_t max_bytes = size_t{1} << 20;  // 1 MiB
  size_t max_nodes = 10000;            // scalars, sequences and mappings together
  // Mappings and sequences inside each other. yaml-cpp's own guard (2000) names itself
  // "bad file"; a settings file is 2-3 levels deep.
  size_t max_depth = 64;
  // [ ] { } , anywhere in the text (see screen_bytes in safe_yaml.cpp for why).
  size_t max_flow_characters = 10000;
};

// One YAML document from text that names itself `name` in messages ("FILE:LINE: words").
// Refused: bytes that are not UTF-8 text (NUL, control characters), more flow collection
// characters than max_flow_characters, aliases and anchors (a settings file never needs them, and
// nested aliases are how 800 bytes expand to gigabytes), more than max_nodes nodes, nesting deeper
// than max_depth, more than one document.
Result<YAML::Node> load_yaml_text(std::string_view text, const std::string& name,
                                  const YamlLimits& limits = {});

// core/files/file_text's read_regular_file (at most limits.max_bytes) + load_yaml_text; a file that
// cannot be read is "PATH: cannot read WHAT: reason" (what: "config file").
Result<YAML::Node> load_yaml_file(const std::string& path, std::string_view what,
                                  const YamlLimits& limits = {});

}  // namespace hucprof
