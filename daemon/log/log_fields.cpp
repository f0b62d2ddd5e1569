#include "log/log_fields.h"

#include <cctype>
#include <cstring>

namespace hucprof {
namespace {

thread_local std::vector<LogField> t_fields;

bool is_name_char(char c) {
  return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
}

}  // namespace

LogFields::LogFields(std::initializer_list<LogField> fields)
    : LogFields(std::vector<LogField>(fields)) {}

LogFields::LogFields(std::vector<LogField> fields) : added_(fields.size()) {
  for (LogField& field : fields) t_fields.push_back(std::move(field));
}

LogFields::~LogFields() { t_fields.resize(t_fields.size() - added_); }

std::span<const LogField> current_log_fields() { return t_fields; }

std::optional<int> errno_number(std::string_view name) {
  // glibc numbers errno values densely from 1; 200 is well past the last (EHWPOISON, 133).
  for (int err = 1; err < 200; ++err) {
    const char* known = strerrorname_np(err);
    if (known != nullptr && name == known) return err;
  }
  return std::nullopt;
}

std::optional<std::string_view> errno_name_in(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != 'E' || (i > 0 && (is_name_char(text[i - 1]) || text[i - 1] == '_'))) continue;
    size_t end = i + 1;
    while (end < text.size() && is_name_char(text[end])) ++end;
    const bool delimited = end == text.size() || text[end] != '_';
    const std::string_view name = text.substr(i, end - i);
    if (delimited && errno_number(name)) return name;
    i = end - 1;
  }
  return std::nullopt;
}

std::vector<LogField> failure_fields(std::string_view target, std::string_view reason) {
  std::vector<LogField> fields{{"target", std::string(target)}, {"reason", std::string(reason)}};
  if (auto name = errno_name_in(reason)) fields.push_back({"errno", std::string(*name)});
  return fields;
}

}  // namespace hucprof
