#include "app/settings_reload.h"

#include <spdlog/spdlog.h>

#include "cli/settings.h"
#include "log/logging.h"

namespace hucprof {

RunOptions reload_settings(const RunOptions& running, const SettingsSource& source) {
  const ParseOutcome outcome = source();
  if (!outcome.command) {
    spdlog::error("SIGHUP: keeping the running settings: {}", outcome.message);
    return running;
  }
  const RunOptions& wanted = outcome.command->run;
  const std::string what =
      running.config_path ? "re-read " + *running.config_path : "no --config file to re-read";

  RunOptions next = running;
  const auto changes = changed_settings(running, wanted);
  std::string applied;
  for (const SettingChange& change : changes) {
    const std::string key(change.setting->key);
    if (change.setting->on_reload == OnReload::Restart) {
      spdlog::warn("SIGHUP: {} {} -> {} takes effect at restart; running with {}", key,
                   change.before, change.after, change.before);
      continue;
    }
    // The parser accepted this value moments ago; a refusal now would be a bug worth a line.
    if (const std::string error = change.setting->apply(change.after, next); !error.empty()) {
      spdlog::error("SIGHUP: {}: {}", key, error);
      continue;
    }
    applied += (applied.empty() ? "" : ", ") + key + " " + change.before + " -> " + change.after;
  }
  spdlog::info("SIGHUP: {}: {}", what,
               changes.empty()   ? "nothing changed"
               : applied.empty() ? "nothing to apply now"
                                 : "applied " + applied);
  if (next.log_format != running.log_format || next.log_level != running.log_level) {
    configure_logging(next.log_format, next.log_level);
  }
  return next;
}

}  // namespace hucprof
