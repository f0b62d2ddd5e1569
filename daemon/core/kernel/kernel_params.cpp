#include "core/kernel/kernel_params.h"

namespace hucprof {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// One whitespace-separated word, where double quotes may enclose spaces (param="a b"), as the
// kernel's next_arg() splits the command line.
std::string_view next_word(std::string_view& rest) {
  size_t start = 0;
  while (start < rest.size() && is_space(rest[start])) ++start;
  rest.remove_prefix(start);
  bool quoted = false;
  size_t end = 0;
  for (; end < rest.size(); ++end) {
    if (rest[end] == '"') quoted = !quoted;
    if (!quoted && is_space(rest[end])) break;
  }
  std::string_view word = rest.substr(0, end);
  rest.remove_prefix(end);
  return word;
}

// The kernel compares parameter names with '-' and '_' as the same character (parameqn()).
bool param_name_equal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i] == '-' ? '_' : a[i];
    char y = b[i] == '-' ? '_' : b[i];
    if (x != y) return false;
  }
  return true;
}

std::string_view unquote(std::string_view value) {
  if (!value.empty() && value.front() == '"') value.remove_prefix(1);
  if (!value.empty() && value.back() == '"') value.remove_suffix(1);
  return value;
}

}  // namespace

std::optional<std::string_view> config_option(std::string_view config, std::string_view key) {
  std::optional<std::string_view> value;
  while (!config.empty()) {
    size_t eol = config.find('\n');
    std::string_view line = config.substr(0, eol);
    config.remove_prefix(eol == std::string_view::npos ? config.size() : eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == '=') {
      value = line.substr(key.size() + 1);
    } else if (line.starts_with("# ") && line.ends_with(" is not set") &&
               line.substr(2, line.size() - 2 - 11) == key) {
      value = "n";
    }
  }
  return value;
}

std::optional<std::string_view> find_kernel_param(std::string_view cmdline, std::string_view name) {
  std::optional<std::string_view> found;
  std::string_view rest = cmdline;
  for (std::string_view word = next_word(rest); !word.empty(); word = next_word(rest)) {
    if (word == "--") break;
    // A quote may open before the name: "param=a b" is as valid as param="a b".
    std::string_view bare = word.front() == '"' ? word.substr(1) : word;
    if (bare.size() > name.size() && bare[name.size()] == '=' &&
        param_name_equal(bare.substr(0, name.size()), name)) {
      found = unquote(bare.substr(name.size() + 1));
    }
  }
  return found;
}

std::optional<bool> kernel_strtobool(std::string_view value) {
  if (value.empty()) return std::nullopt;
  switch (value[0]) {
    case 'y':
    case 'Y':
    case '1':
      return true;
    case 'n':
    case 'N':
    case '0':
      return false;
    case 'o':
    case 'O':
      if (value.size() < 2) return std::nullopt;
      if (value[1] == 'n' || value[1] == 'N') return true;
      if (value[1] == 'f' || value[1] == 'F') return false;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace hucprof
