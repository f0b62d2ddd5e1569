#include "cli/config_file.h"

#include <map>

#include "config/safe_yaml.h"
#include "config/yaml_fields.h"
#include "core/base/message_text.h"

namespace hucprof {
namespace {

using yaml_fields::line_of;

class Flattener {
 public:
  explicit Flattener(const std::string& path) : path_(path) {}

  // Flattens the mapping into entries(), or says what is wrong with it.
  Result<void> flatten(const YAML::Node& map, const std::string& prefix, int parent_line) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      // Copies, not references: yaml-cpp's iterator hands out a temporary pair, so a reference
      // to its members dangles once this statement ends (AddressSanitizer found it).
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      const int line = line_of(key, parent_line);
      if (!key.IsScalar()) return Error{at(line, "keys must be plain names")};
      const std::string name = prefix + key.Scalar();
      if (value.IsMap()) {
        if (auto flattened = flatten(value, name + ".", line); !flattened.ok()) return flattened;
        continue;
      }
      ConfigEntry entry{name, line, ConfigEntry::Kind::Scalar, ""};
      if (value.IsNull()) {
        entry.kind = ConfigEntry::Kind::Null;
      } else if (value.IsScalar()) {
        entry.value = value.Scalar();
      } else {
        entry.kind = ConfigEntry::Kind::Sequence;
        if (value.IsSequence()) {
          for (const YAML::Node& item : value) {
            if (item.IsScalar()) entry.items.push_back(item.Scalar());
          }
          if (entry.items.size() != value.size()) entry.items.clear();
        }
      }
      // yaml-cpp keeps duplicate keys silently; which one wins would be an accident.
      if (const auto [seen, inserted] = first_line_.try_emplace(name, line); !inserted) {
        return Error{at(line, "duplicate key \"" + name + "\" (first set on line " +
                                  std::to_string(seen->second) + ")")};
      }
      entries_.push_back(std::move(entry));
    }
    return {};
  }

  std::string at(int line, const std::string& words) const {
    return path_ + ":" + std::to_string(line) + ": " + words;
  }

  std::vector<ConfigEntry> take() { return std::move(entries_); }

 private:
  const std::string& path_;
  std::vector<ConfigEntry> entries_;
  std::map<std::string, int> first_line_;
};

// yaml-cpp's messages and the keys we quote may hold control characters ("unknown escape
// character: \n"): every error leaves here on one line.
Result<std::vector<ConfigEntry>> flatten(const Result<YAML::Node>& loaded,
                                         const std::string& name) {
  if (!loaded.ok()) return Error{on_one_line(loaded.error().text)};
  const YAML::Node& root = loaded.value();
  if (!root.IsDefined() || root.IsNull()) return std::vector<ConfigEntry>{};  // empty file
  Flattener flattener(name);
  if (!root.IsMap())
    return Error{flattener.at(line_of(root, 1), "expected a mapping of settings (key: value)")};
  if (auto flattened = flattener.flatten(root, "", 1); !flattened.ok()) {
    return Error{on_one_line(flattened.error().text)};
  }
  return flattener.take();
}

}  // namespace

Result<std::vector<ConfigEntry>> parse_config_text(std::string_view text, const std::string& name) {
  return flatten(load_yaml_text(text, name), name);
}

Result<std::vector<ConfigEntry>> read_config_file(const std::string& path) {
  return flatten(load_yaml_file(path, "config file"), path);
}

}  // namespace hucprof
