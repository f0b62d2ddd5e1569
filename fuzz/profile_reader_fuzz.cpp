// libFuzzer target: `hucprof report` on any file. The reader must refuse broken input with a
// message, and whatever it accepts must go through the report, the verdict and the flame graph
// without a crash, a hang or unbounded memory.
//   seeds: fuzz/corpus/profile_reader/ (profiles written by hucprof's writer, truncations)
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "core/flame_tree.h"
#include "core/folding_rules.h"
#include "core/usercopy_cost.h"
#include "export/flame_graph_svg.h"
#include "export/pprof_reader.h"
#include "export/report_text.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hucprof;
  auto read = read_pprof(std::string_view(reinterpret_cast<const char*>(data), size));
  if (const auto* error = std::get_if<std::string>(&read)) {
    // `hucprof report` prints it after the file name: one line that says what is wrong.
    HUC_FUZZ_CHECK(!error->empty() && one_line(*error), "a refused profile is named in one line");
    return 0;
  }
  const StackProfile& profile = std::get<StackProfile>(read);
  const UsercopyCost cost = summarize_cost(profile);
  render_report(profile, cost);
  for (ProfileValue value : {kSamples, kCalls}) {
    render_flame_graph_svg(build_flame_tree(profile, value, FoldingRules::defaults(), "all"), {});
  }
  return 0;
}
