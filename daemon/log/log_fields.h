#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "log/log_line.h"

namespace hucprof {

// Every line this thread logs while a LogFields lives carries its fields (logfmt keys, json
// members, journal fields), after those of an enclosing LogFields:
//   LogFields fields{{"target", name}, {"reason", why}};
//   spdlog::warn("probe {}: unavailable: {}", name, why);
// The message stays readable as it is; the fields are for the pipelines that select on them.
class LogFields {
 public:
  LogFields(std::initializer_list<LogField> fields);
  explicit LogFields(std::vector<LogField> fields);
  ~LogFields();
  LogFields(const LogFields&) = delete;
  LogFields& operator=(const LogFields&) = delete;

 private:
  size_t added_ = 0;
};

// The fields of the lines this thread logs now.
std::span<const LogField> current_log_fields();

// target, reason, and errno when the reason names one ("EACCES: Permission denied", as
// hucprof's reasons quote errno): the fields of an "unavailable" or "refused" line.
std::vector<LogField> failure_fields(std::string_view target, std::string_view reason);

// The errno number of a name such as "EACCES" (glibc's names), or nullopt.
std::optional<int> errno_number(std::string_view name);
// The first errno name in `text` as a word of its own ("... failed: EACCES: Permission denied").
std::optional<std::string_view> errno_name_in(std::string_view text);

}  // namespace hucprof
