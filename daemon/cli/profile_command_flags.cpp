#include "cli/profile_command_flags.h"

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "core/base/quoted_value.h"
#include "core/text/duration.h"

namespace hucprof {

void add_record_flags(CLI::App* app, RecordFlags& flags) {
  flags.duration = app->add_option("--duration", flags.duration_text,
                                   "how long to record, e.g. 30s, 5m (default 30s, or while "
                                   "COMMAND runs or -p's processes live)")
                       ->type_name("DURATION");
  app->add_option("-o,--output", flags.output, "the pprof file to write (gzipped)")
      ->type_name("FILE")
      ->default_str(RecordOptions().output);
  app->add_flag("-a,--all-cpus", flags.all_cpus,
                "the whole machine (with COMMAND: while it runs); the default without COMMAND");
  flags.pids = app->add_option("-p,--pid", flags.pids_text,
                               "only the tasks of these running processes (no COMMAND); the "
                               "recording ends early once they have all exited")
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
  flags.sort =
      app->add_option("--sort", flags.sort_text,
                      "print the checks' samples summed by these keys, comma-separated, "
                      "largest first, instead of the full report (keys: " +
                          sort_key_list() + "; comm in sampled profiles, pid in recordings only)")
          ->type_name("KEYS");
  flags.percent_limit =
      app->add_option("--percent-limit", flags.percent_limit_text,
                      "leave out rows below PCT % of busy CPU (of all calls without sampling) "
                      "and say how many and how much they hold; implies --sort callsite,syscall")
          ->type_name("PCT");
  app->add_flag("--folded", flags.folded,
                "print folded stacks (frame;frame;... count, root first) for flamegraph.pl, "
                "inferno or speedscope instead of the report");
  flags.diff = app->add_option("--diff", flags.diff_path,
                               "compare with BASE: per call site (or --sort keys) the change in "
                               "share of busy CPU, its 95 % interval, and * beyond noise")
                   ->type_name("BASE.pb.gz");
}

std::optional<std::string> apply_report_flags(const ReportFlags& flags, ReportOptions& report) {
  if (flags.input.empty()) return std::string("report: empty FILE");
  report.input = flags.input;
  if (flags.flamegraph->count() > 0) {
    if (flags.flamegraph_path.empty()) return std::string("--flamegraph: empty path");
    report.flamegraph = flags.flamegraph_path;
  }
  if (flags.sort->count() > 0) {
    auto keys = parse_sort_keys(flags.sort_text);
    if (!keys.ok()) return keys.error().text;
    report.sort = std::move(keys).value();
  }
  if (flags.percent_limit->count() > 0) {
    const std::string& text = flags.percent_limit_text;
    char* end = nullptr;
    const double pct = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(pct) || pct < 0 || pct > 100) {
      return "--percent-limit: " + quoted_value(text) + " is not a percentage from 0 to 100";
    }
    report.percent_limit = pct;
  }
  report.folded = flags.folded;
  if (flags.diff->count() > 0) {
    if (flags.diff_path.empty()) return std::string("--diff: empty path");
    report.diff = flags.diff_path;
  }
  if (report.folded && (report.sort || report.percent_limit || report.diff)) {
    return std::string(
        "--folded: prints stacks, not a table; it goes without --sort, --percent-limit and --diff");
  }
  return std::nullopt;
}

}  // namespace hucprof
