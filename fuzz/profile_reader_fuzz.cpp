// libFuzzer target: `hucprof report` on any file. The reader must refuse broken input with a
// message, and whatever it accepts must go through the report, the verdict and the flame graph
// without a crash, a hang or unbounded memory: an accepted profile stays inside the reader's
// limits, checked here with the defaults and with tight ones that small inputs can reach. And
// whatever names it holds, the report a terminal gets and the flame graph an XML parser gets
// are valid UTF-8 without a control byte but the line break (issue 37).
//   seeds: fuzz/corpus/profile_reader/ (profiles written by hucprof's writer, truncations,
//          several gzip members, junk after one, a long name, and issue 37's: hostile names,
//          an unknown field, a string that is not UTF-8, samples that add up past an int64)
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include "core/base/utf8.h"
#include "core/cost/usercopy_cost.h"
#include "core/profile/flame_tree.h"
#include "core/symbols/folding_rules.h"
#include "export/pprof/pprof_reader.h"
#include "export/views/flame_graph_svg.h"
#include "export/views/report_text.h"
#include "fuzz_check.h"

namespace {

using namespace hucprof;

ProfileReadLimits tight_limits() {
  ProfileReadLimits limits;
  limits.max_name_bytes = 16;
  limits.max_samples = 8;
  limits.max_locations = 8;
  limits.max_functions = 8;
  limits.max_mappings = 4;
  limits.max_stack_frames = 8;
  limits.max_stacks = 4;
  limits.max_total_frames = 16;
  limits.max_total_name_bytes = 64;
  limits.max_label_sets = 4;
  return limits;
}

void check_within(const StackProfile& profile, const ProfileReadLimits& limits) {
  HUC_FUZZ_CHECK(profile.samples.size() <= limits.max_samples, "samples within the limit");
  std::set<const ProfileStack*> stacks;
  std::set<const ProfileLabels*> labels;
  size_t frames = 0, name_bytes = 0;
  for (const ProfileSample& s : profile.samples) {
    HUC_FUZZ_CHECK(s.stack && s.labels, "every sample has a stack and labels");
    HUC_FUZZ_CHECK(s.stack->size() <= limits.max_stack_frames, "a stack within the limit");
    if (stacks.insert(s.stack.get()).second) {
      frames += s.stack->size();
      for (const FramePtr& f : *s.stack) {
        HUC_FUZZ_CHECK(f->function.size() <= limits.max_name_bytes, "a name within the limit");
        name_bytes += f->function.size();
      }
    }
    if (labels.insert(s.labels.get()).second) {
      for (const std::string* value :
           {&s.labels->callsite, &s.labels->syscall, &s.labels->check, &s.labels->direction}) {
        HUC_FUZZ_CHECK(value->size() <= limits.max_name_bytes, "a label within the limit");
      }
    }
  }
  HUC_FUZZ_CHECK(stacks.size() <= limits.max_stacks, "distinct stacks within the limit");
  HUC_FUZZ_CHECK(labels.size() <= limits.max_label_sets, "label sets within the limit");
  HUC_FUZZ_CHECK(frames <= limits.max_total_frames, "frames within the limit");
  HUC_FUZZ_CHECK(name_bytes <= limits.max_total_name_bytes, "name bytes within the limit");
}

// What a terminal and an XML 1.0 parser take: UTF-8, no control character but '\n' (C0, DEL,
// C1), no noncharacter U+FFFE/U+FFFF.
bool printable_lines(std::string_view text) {
  while (!text.empty()) {
    const size_t length = utf8_sequence_length(text);
    if (length == 0) return false;
    const auto lead = static_cast<unsigned char>(text[0]);
    if (length == 1 && ((lead < 0x20 && lead != '\n') || lead == 0x7f)) return false;
    if (length == 2 && lead == 0xc2 && static_cast<unsigned char>(text[1]) < 0xa0) return false;
    if (text.substr(0, length) == "\xef\xbf\xbe" || text.substr(0, length) == "\xef\xbf\xbf") {
      return false;
    }
    text.remove_prefix(length);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const ProfileReadLimits tight = tight_limits();
  if (auto small = read_pprof(bytes, tight); small.ok()) {
    check_within(small.value(), tight);
  }
  auto read = read_pprof(bytes);
  if (!read.ok()) {
    // `hucprof report` prints it after the file name: one line that says what is wrong.
    HUC_FUZZ_CHECK(!read.error().text.empty() && one_line(read.error().text),
                   "a refused profile is named in one line");
    return 0;
  }
  const StackProfile& profile = read.value();
  check_within(profile, ProfileReadLimits{});
  const UsercopyCost cost = summarize_cost(profile);
  HUC_FUZZ_CHECK(printable_lines(render_report(profile, cost)),
                 "the report is UTF-8 without control bytes");
  for (ProfileValue value : {kSamples, kCalls}) {
    HUC_FUZZ_CHECK(printable_lines(render_flame_graph_svg(
                       build_flame_tree(profile, value, FoldingRules::defaults(), "all"), {})),
                   "the flame graph is UTF-8 without control bytes");
  }
  return 0;
}
