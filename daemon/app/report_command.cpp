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

namespace hucprof {

namespace {

constexpr int kBadInput = 2;

std::string flame_graph_for(const StackProfile& profile, const std::string& file) {
  const std::string title = profile.sampling ? file + ": CPU in the hardened-usercopy checks"
                                             : file + ": hardened-usercopy checks (calls)";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
         render_profile_flame_graph(profile, title);
}

}  // namespace

int report_command(const ReportOptions& options) {
  FileIdentity input;
  const Result<std::string> file = read_regular_file(options.input, kMaxProfileBytes, &input);
  if (!file.ok()) {
    std::fprintf(stderr, "hucprof report: %s: %s\n", options.input.c_str(),
                 file.error().text.c_str());
    return kBadInput;
  }
  // Opened before anything is printed: a flame graph path that cannot be written is a usage
  // error like a bad -o, and the input is never its own output.
  std::optional<OutputFile> flamegraph;
  if (options.flamegraph) {
    auto opened = OutputFile::open(*options.flamegraph, input);
    if (auto* why = std::get_if<std::string>(&opened)) {
      std::fprintf(stderr, "hucprof report: --flamegraph %s: %s\n", options.flamegraph->c_str(),
                   why->c_str());
      return kBadInput;
    }
    flamegraph.emplace(std::move(std::get<OutputFile>(opened)));
  }
  auto read = read_pprof(file.value());
  if (auto* error = std::get_if<std::string>(&read)) {
    std::fprintf(stderr, "hucprof report: %s: %s\n", options.input.c_str(), error->c_str());
    return kBadInput;
  }
  const StackProfile& profile = std::get<StackProfile>(read);
  const std::string text = render_report(profile, summarize_cost(profile));
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (flamegraph) {
    if (auto error = flamegraph->commit(flame_graph_for(profile, options.input)); !error.empty()) {
      std::fprintf(stderr, "hucprof report: --flamegraph %s: %s\n", options.flamegraph->c_str(),
                   error.c_str());
      return 1;
    }
    std::fprintf(stderr, "flame graph: %s\n", options.flamegraph->c_str());
  }
  return 0;
}

}  // namespace hucprof
