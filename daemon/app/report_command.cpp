#include "app/report_command.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "app/output_file.h"
#include "core/cost/usercopy_cost.h"
#include "core/files/file_text.h"
#include "export/pprof/pprof_format.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/flame_graph_svg.h"
#include "export/views/folded_stacks.h"
#include "export/views/report_text.h"
#include "export/views/sorted_report.h"
#include "log/logging.h"

namespace hucprof {

namespace {

// One line on stderr naming what could not be read or written, then the exit code.
int refuse(const std::string& what, const Error& error) {
  print_stderr_line("hucprof report: " + what + ": " + error.text);
  return error.exit_code;
}

// Titled with the report's headline: the share, its interval and the profile's span.
std::string flame_graph_for(const StackProfile& profile, const std::string& file) {
  const UsercopyCost cost = summarize_cost(profile, 0);
  const std::string window = "over the profile's " + format_seconds(cost.window_seconds);
  std::string title = file + ": hardened-usercopy checks (calls) " + window;
  if (auto line = headline(cost, headline_estimate(cost), window)) {
    title = file + ": " + line->lead + " " + window;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
         render_profile_flame_graph(profile, title);
}

Result<StackProfile> read_profile(const std::string& path) {
  const Result<std::string> file = read_regular_file(path, kMaxProfileBytes);
  if (!file.ok()) return file.error();
  return read_pprof(file.value());
}

// What the flags ask to print instead of (or as) the report; nullopt with an error printed.
std::optional<std::string> report_text(const ReportOptions& options, const StackProfile& profile,
                                       int& exit_code) {
  if (options.folded) return folded_stacks(profile);
  const std::vector<SortKey> keys =
      options.sort.value_or(std::vector<SortKey>{SortKey::Callsite, SortKey::Syscall});
  // Keys only some profiles carry: refused, not a table of "-".
  const std::pair<SortKey, const char*> carried_by_some[] = {
      {SortKey::Comm, "comm label (probe-only and older profiles have none); try --sort workload"},
      {SortKey::Pid, "pid label (only recordings do, not a daemon's profiles); try --sort comm"},
  };
  for (const auto& [key, missing] : carried_by_some) {
    if (std::find(keys.begin(), keys.end(), key) != keys.end() && !profile_has_key(profile, key)) {
      exit_code = refuse("--sort " + std::string(sort_key_name(key)),
                         Error{std::string("this profile carries no ") + missing});
      return std::nullopt;
    }
  }
  if (options.diff) {
    const Result<StackProfile> base = read_profile(*options.diff);
    if (!base.ok()) {
      exit_code = refuse("--diff " + *options.diff, base.error());
      return std::nullopt;
    }
    if (!base.value().sampling || !profile.sampling) {
      exit_code = refuse("--diff", Error{"compares shares of busy CPU: both profiles must be "
                                         "sampled (record --mode sample or auto)"});
      return std::nullopt;
    }
    return render_diff_report(base.value(), *options.diff, profile, options.input,
                              options.sort.value_or(std::vector<SortKey>{SortKey::Callsite}),
                              options.percent_limit);
  }
  if (options.sort || options.percent_limit) {
    return render_sorted_report(profile, keys, options.percent_limit);
  }
  return render_report(profile, summarize_cost(profile));
}

}  // namespace

int report_command(const ReportOptions& options) {
  FileIdentity input;
  const Result<std::string> file = read_regular_file(options.input, kMaxProfileBytes, &input);
  if (!file.ok()) return refuse(options.input, file.error());
  // Opened before anything is printed: a flame graph path that cannot be written is a usage
  // error like a bad -o, and the input is never its own output.
  std::optional<OutputFile> flamegraph;
  if (options.flamegraph) {
    auto opened = OutputFile::open(*options.flamegraph, OutputContent::Text, input);
    if (!opened.ok()) return refuse("--flamegraph " + *options.flamegraph, opened.error());
    flamegraph.emplace(std::move(opened).value());
  }
  const Result<StackProfile> read = read_pprof(file.value());
  if (!read.ok()) return refuse(options.input, read.error());
  const StackProfile& profile = read.value();
  int exit_code = 0;
  const std::optional<std::string> text = report_text(options, profile, exit_code);
  if (!text) return exit_code;
  std::fwrite(text->data(), 1, text->size(), stdout);
  if (flamegraph) {
    if (auto written = flamegraph->commit(flame_graph_for(profile, options.input)); !written.ok()) {
      return refuse("--flamegraph " + *options.flamegraph, written.error());
    }
    print_stderr_line("flame graph: " + *options.flamegraph);
  }
  return 0;
}

}  // namespace hucprof
