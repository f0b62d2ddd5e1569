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
  app->add_flag("-a,--all-cpus", flags.all_cpus,
                "the whole machine (with COMMAND: while it runs); the default without COMMAND");
  flags.pids = app->add_option("-p,--pid", flags.pids_text,
                               "only the tasks of these running processes (no COMMAND)")
                   ->type_name("PID[,PID...]");
  flags.cpus = app->add_option("-C,--cpu", flags.cpus_text, "only these CPUs, e.g. 0,2-3")
                   ->type_name("CPUS");
  flags.cgroup =
      app->add_option("-G,--cgroup", flags.cgroup_text,
                      "only the tasks of this cgroup v2 (a path below /sys/fs/cgroup) or "
                      "systemd unit")
          ->type_name("PATH|UNIT");
  app->add_flag("--only-command", flags.only_command,
                "deprecated: what -- COMMAND does by itself now");
  app->add_option("command", flags.command,
                  "run this and record it and its children while it runs (after --)")
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
  record.target.all_cpus = flags.all_cpus;
  if (flags.pids->count() > 0) record.target.pids = flags.pids_text;
  if (flags.cpus->count() > 0) record.target.cpus = flags.cpus_text;
  if (flags.cgroup->count() > 0) record.target.cgroup = flags.cgroup_text;
  record.target.only_command = flags.only_command;
  record.target.has_command = !record.command.empty();
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
