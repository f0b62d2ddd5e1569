#include "cli/options.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/config_file.h"
#include "cli/profile_command_flags.h"
#include "cli/settings.h"
#include "cli/top_command_flags.h"
#include "core/base/message_text.h"

namespace hucprof {
namespace {

constexpr int kUsageError = 2;
constexpr const char* kHiddenKallsymsFlag = "--kallsyms";
constexpr const char* kUsage =
    "usage: hucprof run|doctor|record|report|top|version [flags] (see hucprof --help)";

ParseOutcome usage_error(const std::string& message) {
  return {std::nullopt, kUsageError, on_one_line(message)};
}

// Callers print the message with a newline of their own.
std::string without_final_newline(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// The flags of one subcommand, as given (text), before validation.
struct SubcommandFlags {
  CLI::App* app = nullptr;
  std::map<std::string_view, CLI::Option*> settings;           // key → option
  std::map<std::string_view, std::string> values;              // key → text given
  std::map<std::string_view, std::vector<std::string>> lists;  // key → texts of a repeatable
  std::map<std::string_view, std::string> switches;  // key → text of a switch given ("true")
  CLI::Option* config = nullptr;
  std::string config_path;
  CLI::Option* kallsyms = nullptr;
  std::string kallsyms_path;
};

bool takes(CommandKind kind, const Setting& setting) {
  switch (kind) {
    case CommandKind::Doctor:
      return setting.doctor;
    case CommandKind::Record:
      return setting.record;
    case CommandKind::Top:  // what record takes but --interval: top drains every --delay
      return setting.record && setting.key != "interval";
    default:
      return true;
  }
}

void add_flags(SubcommandFlags& flags, CommandKind kind) {
  const RunOptions defaults;
  for (const Setting& setting : settings()) {
    if (!takes(kind, setting)) continue;
    std::string name = "--" + std::string(setting.key);
    if ((kind == CommandKind::Record || kind == CommandKind::Top) &&
        !setting.record_short.empty()) {
      name = "-" + std::string(setting.record_short) + "," + name;
    }
    const std::string help = std::string(setting.help);
    CLI::Option* option = nullptr;
    if (setting.append != nullptr) {
      // One value per flag, the flag as often as wanted; taken as written (CLI11 would read
      // "[::1]:80" as a bracketed list and swallow the next word otherwise).
      option = flags.app->add_option(name, flags.lists[setting.key], help)
                   ->type_name(std::string(setting.value_name))
                   ->default_str(setting.show(defaults))
                   ->expected(1)
                   ->allow_extra_args(false)
                   ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    } else if (setting.value_name.empty()) {
      // Bound to text ("true" when bare) so "--latency=false" reads as false rather than as
      // "given", and "--latency=2" is judged by the same words as `latency: 2` in the config.
      option = flags.app->add_flag(name, flags.switches[setting.key])->description(help);
    } else {
      option = flags.app->add_option(name, flags.values[setting.key], help)
                   ->type_name(std::string(setting.value_name))
                   ->default_str(setting.show(defaults));
    }
    flags.settings[setting.key] = option;
  }
  flags.config =
      flags.app
          ->add_option("--config", flags.config_path,
                       "read settings from this YAML file; flags win over it (\"\": none)")
          ->type_name("FILE");
  // For tests and containers; not something an operator needs to see in --help.
  flags.kallsyms = flags.app->add_option(kHiddenKallsymsFlag, flags.kallsyms_path)->group("");
}

// Config first, flags second: a flag overrides the file, but a bad file is an error even for
// keys a flag overrides, so a config that only works thanks to flags cannot go unnoticed.
std::optional<std::string> apply_config(const std::string& path, RunOptions& options) {
  auto read = read_config_file(path);
  if (!read.ok()) return read.error().text;
  return apply_config_entries(read.value(), path, options);
}

std::optional<std::string> apply_flags(const SubcommandFlags& flags, RunOptions& options) {
  for (const auto& [key, option] : flags.settings) {
    if (option->count() == 0) continue;
    const Setting* setting = find_setting(key);
    if (const auto list = flags.lists.find(key); list != flags.lists.end()) {
      for (size_t i = 0; i < list->second.size(); ++i) {
        const auto apply = i == 0 ? setting->apply : setting->append;
        if (auto error = apply(list->second[i], options); !error.empty()) {
          return "--" + std::string(key) + ": " + error;
        }
      }
      continue;
    }
    const auto value = flags.values.find(key);
    const auto on = flags.switches.find(key);
    const std::string text = value != flags.values.end() ? value->second : on->second;
    if (auto error = setting->apply(text, options); !error.empty()) {
      return "--" + std::string(key) + ": " + error;
    }
  }
  return std::nullopt;
}

ParseOutcome finish(CommandKind kind, const SubcommandFlags& flags) {
  Command command;
  command.kind = kind;
  // Empty means none, as --web.config.file "" does (exporter-toolkit's convention).
  if (flags.config->count() > 0 && !flags.config_path.empty()) {
    command.run.config_path = flags.config_path;
    if (auto error = apply_config(flags.config_path, command.run)) return usage_error(*error);
  }
  if (auto error = apply_flags(flags, command.run)) return usage_error(*error);
  if (flags.kallsyms->count() > 0) {
    if (flags.kallsyms_path.empty()) return usage_error("--kallsyms: empty path");
    command.run.kallsyms_path = flags.kallsyms_path;
  }
  return {command, 0, ""};
}

// With allow_extras, CLI11 leaves what it does not know to us, so the message is ours.
std::string describe_extra(const std::string& arg, bool at_top) {
  if (arg.rfind("-", 0) == 0) return "unknown flag " + arg.substr(0, arg.find('='));
  if (at_top) return "unknown command \"" + arg + "\"; " + kUsage;
  return "unexpected argument \"" + arg + "\"";
}

// CLI11 says "--mode: 1 required MODE missing" for a flag given without its value; the usual
// cause deserves plain words. CLI11 leaves the name out for hidden options, and the only hidden
// one is --kallsyms. Anything else CLI11 reports passes through as it is.
std::string describe_mismatch(const std::string& what) {
  const size_t colon = what.find(": ");
  const bool missing_value = colon != std::string::npos &&
                             what.find(" required ") != std::string::npos && what.size() >= 8 &&
                             what.compare(what.size() - 8, 8, " missing") == 0;
  if (!missing_value) return lowercase_first(what);
  const std::string name = colon == 0 ? kHiddenKallsymsFlag : what.substr(0, colon);
  return name + ": missing value";
}

// `top --from` reads a daemon whose own settings apply: a setting of this node's programs,
// given as a flag or in --config, would be ignored, so it is an error.
std::optional<std::string> setting_ignored_with_from(const RunOptions& options) {
  for (const SettingChange& change : changed_settings(RunOptions(), options)) {
    if (change.setting->key.starts_with("log.")) continue;
    return "--" + std::string(change.setting->key) +
           ": not with --from (the daemon's own settings apply)";
  }
  return std::nullopt;
}

}  // namespace

ParseOutcome parse_command_line(int argc, const char* const* argv) {
  CLI::App app("hucprof: where the kernel's hardened-usercopy checks cost CPU, per call site",
               "hucprof");
  app.allow_extras();
  auto* version_flag = app.add_flag("--version")->description("print the version and exit");

  SubcommandFlags run, doctor, record, top;
  RecordFlags record_flags;
  ReportFlags report_flags;
  TopFlags top_flags;
  run.app = app.add_subcommand("run", "profile continuously and serve Prometheus metrics");
  doctor.app = app.add_subcommand(
      "doctor", "check what this kernel allows (probes, sampling, symbols) and say why not");
  record.app = app.add_subcommand(
      "record", "profile for a while (or while COMMAND runs) into a pprof file, no HTTP server");
  CLI::App* report =
      app.add_subcommand("report", "print a recorded profile's cost table, top stacks and verdict");
  top.app = app.add_subcommand(
      "top", "the call sites ranked live by their share of busy CPU, from here or a daemon");
  CLI::App* version = app.add_subcommand("version", "print the version and exit");
  for (CLI::App* sub : {run.app, doctor.app, record.app, report, top.app, version}) {
    sub->allow_extras();
  }
  add_flags(run, CommandKind::Run);
  add_flags(doctor, CommandKind::Doctor);
  add_flags(record, CommandKind::Record);
  add_record_flags(record.app, record_flags);
  add_report_flags(report, report_flags);
  add_flags(top, CommandKind::Top);
  add_top_flags(top.app, top_flags);

  // Everything after "--" is `hucprof record`'s COMMAND, untouched by flag parsing.
  int parsed_argc = argc;
  std::vector<std::string> after_dashes;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--") continue;
    parsed_argc = i;
    after_dashes.assign(argv + i + 1, argv + argc);
    break;
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp&) {
    return {std::nullopt, 0, without_final_newline(app.help())};  // the subcommand's, if given
  } catch (const CLI::CallForAllHelp&) {
    return {std::nullopt, 0, without_final_newline(app.help("", CLI::AppFormatMode::All))};
  } catch (const CLI::ArgumentMismatch& e) {
    return usage_error(describe_mismatch(e.what()));
  } catch (const CLI::ParseError& e) {
    return usage_error(lowercase_first(e.what()));
  }

  if (const auto top_extras = app.remaining(); !top_extras.empty()) {
    return usage_error(describe_extra(top_extras.front(), true));
  }
  for (CLI::App* sub : {run.app, doctor.app, record.app, report, top.app, version}) {
    if (const auto extras = sub->remaining(); !extras.empty()) {
      return usage_error(describe_extra(extras.front(), false));
    }
  }
  if (parsed_argc != argc && !record.app->parsed()) {
    return usage_error("unexpected \"--\": only `hucprof record -- COMMAND` takes a command");
  }
  if (run.app->parsed()) return finish(CommandKind::Run, run);
  if (doctor.app->parsed()) return finish(CommandKind::Doctor, doctor);
  if (record.app->parsed()) {
    record_flags.command.insert(record_flags.command.end(), after_dashes.begin(),
                                after_dashes.end());
    ParseOutcome outcome = finish(CommandKind::Record, record);
    if (!outcome.command) return outcome;
    if (auto error = apply_record_flags(record_flags, outcome.command->record)) {
      return usage_error(*error);
    }
    return outcome;
  }
  if (top.app->parsed()) {
    ParseOutcome outcome = finish(CommandKind::Top, top);
    if (!outcome.command) return outcome;
    Command& command = *outcome.command;
    if (auto error = apply_top_flags(top_flags, command.top)) return usage_error(*error);
    if (command.top.from) {
      if (auto error = setting_ignored_with_from(command.run)) return usage_error(*error);
    }
    return outcome;
  }
  if (report->parsed()) {
    Command command;
    command.kind = CommandKind::Report;
    if (auto error = apply_report_flags(report_flags, command.report)) return usage_error(*error);
    return {command, 0, ""};
  }
  if (version->parsed() || version_flag->count() > 0) {
    Command command;
    command.kind = CommandKind::Version;
    return {command, 0, ""};
  }
  return usage_error(std::string("missing command; ") + kUsage);
}

}  // namespace hucprof
