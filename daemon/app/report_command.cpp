#include "app/report_command.h"

#include <cstdio>
#include <optional>

#include "app/output_file.h"
#include "core/file_text.h"
#include "core/usercopy_cost.h"
#include "export/flame_graph_svg.h"
#include "export/pprof_format.h"
#include "export/pprof_reader.h"
#include "export/report_text.h"
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
  const std::string text = render_report(profile, summarize_cost(profile));
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (flamegraph) {
    if (auto written = flamegraph->commit(flame_graph_for(profile, options.input)); !written.ok()) {
      return refuse("--flamegraph " + *options.flamegraph, written.error());
    }
    print_stderr_line("flame graph: " + *options.flamegraph);
  }
  return 0;
}

}  // namespace hucprof
