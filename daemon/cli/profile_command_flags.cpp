#include "cli/profile_command_flags.h"

#include <chrono>

#include "cli/duration.h"

namespace hucprof {

void add_record_flags(CLI::App* app, RecordFlags& flags) {
  flags.duration =
      app->add_option("--duration", flags.duration_text,
                      "how long to record, e.g. 30s, 5m (default 30s, or while COMMAND runs)")
          ->type_name("DURATION");
  app->add_option("-o,--output", flags.output, "the pprof file to write (gzipped)")
      ->type_name("FILE")
      ->default_str(RecordOptions().output);
  app->add_flag("--only-command", flags.only_command,
                "count only COMMAND and what it starts: it runs in a cgroup of its own and "
                "nothing else is sampled (with --mode sample)");
  app->add_option("command", flags.command, "run this and record while it runs (after --)")
      ->type_name("COMMAND");
}

std::optional<std::string> apply_record_flags(const RecordFlags& flags, RecordOptions& record) {
  if (flags.duration->count() > 0) {
    auto parsed = parse_duration_within(flags.duration_text, std::chrono::seconds(1));
    if (!parsed.ok()) return "--duration: " + parsed.error().text;
    record.duration = parsed.value();
  }
  if (flags.output.empty()) return std::string("--output: empty path");
  record.output = flags.output;
  record.command = flags.command;
  record.only_command = flags.only_command;
  if (record.only_command && record.command.empty()) {
    return std::string("--only-command: needs a COMMAND after --");
  }
  return std::nullopt;
}

void add_report_flags(CLI::App* app, ReportFlags& flags) {
  app->add_option("file", flags.input,
                  "a profile written by hucprof record (or served on /debug/pprof/usercopy)")
      ->type_name("FILE")
      ->default_str(flags.input);
  flags.flamegraph = app->add_option("--flamegraph", flags.flamegraph_path,
                                     "also write the profile's flame graph as a standalone SVG")
                         ->type_name("OUT.svg");
}

std::optional<std::string> apply_report_flags(const ReportFlags& flags, ReportOptions& report) {
  if (flags.input.empty()) return std::string("report: empty FILE");
  report.input = flags.input;
  if (flags.flamegraph->count() > 0) {
    if (flags.flamegraph_path.empty()) return std::string("--flamegraph: empty path");
    report.flamegraph = flags.flamegraph_path;
  }
  return std::nullopt;
}

}  // namespace hucprof
