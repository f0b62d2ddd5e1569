#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/safe_yaml.h"
#include "core/base/named_values.h"
#include "core/base/result.h"

// Strict readers for the fields of a YAML settings file: each known key is read by its own
// function, and anything else (an unknown or repeated key, a value of the wrong shape) is an
// error that names the key and its line, as exporter-toolkit's strict unmarshalling does.
namespace hucprof::yaml_fields {

// Bound on the items of one list: far above any real settings file, far below what costs memory.
inline constexpr size_t kMaxListItems = 1000;

// yaml-cpp marks are 0-based; people count lines from 1. Nodes without a position (-1) fall
// back to `fallback`, the line of their parent.
int line_of(const YAML::Node& node, int fallback);

// What is wrong at a line of the file; the caller puts the file's name before it.
Error at(int line, std::string words);

// Reads one value of a mapping; its Error stops the whole file.
using Reader = std::function<Result<void>(const YAML::Node& value, int line)>;

// One mapping: each key read by its reader in `readers`; an unknown key, a duplicate key or a key
// that is not a plain name is an error. `name` is the mapping's key ("" for the document itself).
Result<void> read_section(const YAML::Node& node, const std::string& name, int line,
                          const std::map<std::string_view, Reader>& readers);

// A single value ("" when null); a list or mapping is an error naming `key`.
Result<std::string> scalar(const YAML::Node& value, int line, const std::string& key);
// A boolean as YAML 1.1 (Go's yaml.v2) spells it: true/yes/on, false/no/off.
Result<bool> boolean(const YAML::Node& value, int line, const std::string& key);
// A list of single values (empty when null), at most kMaxListItems.
Result<std::vector<std::string>> string_list(const YAML::Node& value, int line,
                                             const std::string& key);

// Readers that store scalar's, boolean's and string_list's answer for the key into `into`.
Reader set_text(std::string& into, std::string key);
Reader set_boolean(bool& into, std::string key);
Reader set_list(std::vector<std::string>& into, std::string key);

// `text` as one of the named `choices`; the error names the key and the choices.
template <typename T, size_t N>
Result<T> one_of(const std::string& text, const NamedValues<T, N>& choices, int line,
                 const std::string& key) {
  auto found = find_named(choices, text);
  if (!found.ok()) return at(line, key + ": " + found.error().text);
  return found.value();
}

// A reader that stores one_of's answer for the key's scalar.
template <typename T, size_t N>
Reader set_one_of(T& into, const NamedValues<T, N>& choices, std::string key) {
  return [&into, &choices, key = std::move(key)](const YAML::Node& v, int l) -> Result<void> {
    const Result<std::string> text = scalar(v, l, key);
    if (!text.ok()) return text.error();
    const Result<T> value = one_of(text.value(), choices, l, key);
    if (!value.ok()) return value.error();
    into = value.value();
    return {};
  };
}

}  // namespace hucprof::yaml_fields
