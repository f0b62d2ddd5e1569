#include "config/yaml_fields.h"

#include <set>
#include <utility>

#include "core/base/message_text.h"

namespace hucprof::yaml_fields {

int line_of(const YAML::Node& node, int fallback) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : fallback;
}

Error at(int line, std::string words) { return Error{std::to_string(line) + ": " + words}; }

Result<void> read_section(const YAML::Node& node, const std::string& name, int line,
                          const std::map<std::string_view, Reader>& readers) {
  line = line_of(node, line);
  if (!node.IsMap()) {
    return at(line,
              name.empty() ? "expected a mapping of keys" : name + ": expected a mapping of keys");
  }
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const int key_line = line_of(it->first, line);
    if (!it->first.IsScalar()) return at(key_line, name + ": keys must be plain names");
    const std::string key = it->first.Scalar();
    const auto reader = readers.find(key);
    if (reader == readers.end()) {
      return at(key_line, "unknown key " + in_quotes(key) + (name.empty() ? "" : " in " + name));
    }
    if (!seen.insert(key).second) return at(key_line, "duplicate key " + in_quotes(key));
    if (Result<void> read = reader->second(it->second, key_line); !read.ok()) return read;
  }
  return {};
}

Result<std::string> scalar(const YAML::Node& value, int line, const std::string& key) {
  if (value.IsNull()) return std::string();
  if (!value.IsScalar()) return at(line, key + ": expected a single value");
  return value.Scalar();
}

Reader set_text(std::string& into, std::string key) {
  return [&into, key = std::move(key)](const YAML::Node& v, int l) -> Result<void> {
    Result<std::string> text = scalar(v, l, key);
    if (!text.ok()) return text.error();
    into = std::move(text.value());
    return {};
  };
}

Result<bool> boolean(const YAML::Node& value, int line, const std::string& key) {
  const Result<std::string> text = scalar(value, line, key);
  if (!text.ok()) return text.error();
  if (const auto on = parse_boolean(text.value())) return *on;
  return at(line, key + ": " + in_quotes(text.value()) + " is not a boolean (true or false)");
}

Reader set_boolean(bool& into, std::string key) {
  return [&into, key = std::move(key)](const YAML::Node& v, int l) -> Result<void> {
    const Result<bool> on = boolean(v, l, key);
    if (!on.ok()) return on.error();
    into = on.value();
    return {};
  };
}

Result<std::vector<std::string>> string_list(const YAML::Node& value, int line,
                                             const std::string& key) {
  if (value.IsNull()) return std::vector<std::string>();
  if (!value.IsSequence()) return at(line, key + ": expected a list");
  if (value.size() > kMaxListItems) {
    return at(line, key + ": more than " + std::to_string(kMaxListItems) + " items");
  }
  std::vector<std::string> items;
  for (const YAML::Node& item : value) {
    Result<std::string> text = scalar(item, line_of(item, line), key);
    if (!text.ok()) return text.error();
    items.push_back(std::move(text.value()));
  }
  return items;
}

Reader set_list(std::vector<std::string>& into, std::string key) {
  return [&into, key = std::move(key)](const YAML::Node& v, int l) -> Result<void> {
    Result<std::vector<std::string>> items = string_list(v, l, key);
    if (!items.ok()) return items.error();
    into = std::move(items.value());
    return {};
  };
}

}  // namespace hucprof::yaml_fields
