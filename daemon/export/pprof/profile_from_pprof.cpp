#include "export/pprof/profile_from_pprof.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/base/quoted_value.h"
#include "export/pprof/pprof_format.h"

namespace hucprof {

namespace {

// hucprof writes 2 contexts and 1 exclusion: a file with far more is refused, the report bounded.
constexpr size_t kMaxRestKinds = 16;
// The most a sum of sample values may reach: pprof's values are int64.
constexpr uint64_t kMaxTotal = std::numeric_limits<int64_t>::max();

std::string count_words(size_t n, const char* what) { return std::to_string(n) + " " + what; }

struct StackKeyHash {
  size_t operator()(const std::vector<uint64_t>& ids) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the ids
    for (uint64_t id : ids) h = (h ^ id) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct LabelKey {
  // callsite, syscall, step, direction, copy, workload, workload_kind, comm (string indices)
  std::array<int64_t, 8> strings{};
  int64_t pid = 0;  // the numeric label pid
  bool operator==(const LabelKey&) const = default;
};
struct LabelKeyHash {
  size_t operator()(const LabelKey& key) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t s : key.strings) h = (h ^ static_cast<uint64_t>(s)) * 1099511628211ull;
    h = (h ^ static_cast<uint64_t>(key.pid)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct SampleKeyHash {
  size_t operator()(const std::pair<const void*, const void*>& key) const {
    return std::hash<const void*>()(key.first) * 31 + std::hash<const void*>()(key.second);
  }
};

}  // namespace

// The mapping itself (its public methods are ProfileFromPprof's, profile_from_pprof.h).
class ProfileFromPprof::Impl {
 public:
  Impl(const pprof::Profile& header, const ProfileReadLimits& limits,
       std::unordered_map<int64_t, size_t> oversized)
      : in_(header), limits_(limits), oversized_(std::move(oversized)) {}

  bool refused() const { return refusal_.has_value(); }
  const std::string& refusal() const { return *refusal_; }

  void read_header() {
    if (in_.string_table_size() == 0) return refuse("it has no string table");
    if (!in_.string_table(0).empty()) return refuse("string_table[0] must be the empty string");
    for (void (Impl::*step)() :
         {&Impl::map_sample_types, &Impl::read_comments, &Impl::read_functions,
          &Impl::read_mappings, &Impl::read_locations}) {
      (this->*step)();
      if (refused()) return;
    }
    if (in_.time_nanos() < 0 || in_.duration_nanos() < 0) {
      return refuse("its start time or duration is negative");
    }
    out_.time_unix_ns = in_.time_nanos();
    out_.duration_ns = in_.duration_nanos();
  }

  bool read_sample(const pprof::Sample& s) {
    const int types = in_.sample_type_size();
    if (s.value_size() != types) {
      refuse("a sample has " + std::to_string(s.value_size()) + " values for " +
             std::to_string(types) + " sample types");
      return false;
    }
    ProfileValues values{};
    for (size_t v = 0; v < kProfileValueCount; ++v) {
      if (value_index_[v]) values[v] = count(s.value(*value_index_[v]));
    }
    // A profile with CPU time but no sample count (another tool's): one "sample" per period.
    if (!value_index_[kSamples] && cpu_index_) {
      const uint64_t ns = count(s.value(*cpu_index_));
      if (out_.sample_period_ns == 0) out_.sample_period_ns = 1;
      values[kSamples] = ns / out_.sample_period_ns;
    }
    if (refused() || !add_to_totals(values)) return false;
    if (rest_of_busy_cpu(s, values[kSamples])) return !refused();
    in_checks_ += values[kSamples];
    const StackPtr& stack = stack_of(s);
    const LabelsPtr& labels = labels_of(s);
    if (refused()) return false;
    if (!labels->workload.empty() && values[kSamples]) {
      in_checks_by_workload_[labels->workload] += values[kSamples];
    }
    const auto [merged, fresh] =
        sample_index_.try_emplace({stack.get(), labels.get()}, out_.samples.size());
    if (fresh) {
      out_.samples.push_back(ProfileSample{stack, labels, values});
      return true;
    }
    ProfileValues& into = out_.samples[merged->second].values;
    for (size_t v = 0; v < kProfileValueCount; ++v) into[v] += values[v];  // <= totals_[v]
    return true;
  }

  StackProfile take() {
    if (!rest_by_context_.empty()) {  // else an older file: the comments had the contexts
      // Kernel CPU is the checks' samples plus the kernel rest (the interrupts in checks
      // included).
      out_.sampled_by_context["kernel"] = in_checks_ + rest_by_context_["kernel"];
      for (const auto& [context, n] : rest_by_context_) {
        if (context != "kernel") out_.sampled_by_context[context] = n;
      }
    }
    // A workload's kernel CPU, likewise: its checks' samples plus its kernel rest.
    for (auto& [workload, busy] : out_.busy_by_workload) {
      if (auto it = in_checks_by_workload_.find(workload); it != in_checks_by_workload_.end()) {
        busy.kernel += it->second;
      }
    }
    return std::move(out_);
  }

 private:
  // What a step that refused the file hands back: never read, the file is thrown away.
  static inline const std::string kNone;
  static inline const std::vector<FramePtr> kNoFrames;
  static inline const StackPtr kNoStack = std::make_shared<const ProfileStack>();
  static inline const LabelsPtr kNoLabels = make_labels({});

  void refuse(std::string why) {
    if (!refusal_) refusal_ = std::move(why);
  }

  // Every sum the report makes (a call site's, a workload's, the busy CPU) is part of one of
  // these totals, so none can overflow once they stay within an int64, as pprof's values do.
  bool add_to_totals(const ProfileValues& values) {
    for (size_t v = 0; v < kProfileValueCount; ++v) {
      if (values[v] > kMaxTotal - totals_[v]) {
        refuse("its sample values of type \"" +
               std::string(pprof_sample_type(static_cast<ProfileValue>(v)).type) +
               "\" add up to more than " + std::to_string(kMaxTotal) + " (an int64)");
        return false;
      }
      totals_[v] += values[v];
    }
    return true;
  }

  const std::string& str(int64_t index, const char* what) {
    if (index < 0 || index >= in_.string_table_size()) {
      refuse(std::string(what) + " names string " + std::to_string(index) + " of a table of " +
             std::to_string(in_.string_table_size()));
      return kNone;
    }
    return in_.string_table(static_cast<int>(index));
  }

  // A string the report keeps and prints: bounded, so a few kilobytes of file cannot become
  // gigabytes of names.
  const std::string& name(int64_t index, const char* what) {
    const std::string& text = str(index, what);
    if (const auto long_one = oversized_.find(index); long_one != oversized_.end()) {
      refuse(std::string(what) + " is " + count_words(long_one->second, "bytes") +
             " long, more than the " + std::to_string(limits_.max_name_bytes) +
             " hucprof reads (a kernel symbol has at most 512)");
      return kNone;
    }
    return text;
  }

  void at_most(size_t n, size_t max, const char* what) {
    if (n > max) {
      refuse("it has " + count_words(n, what) + ", more than the " + std::to_string(max) +
             " hucprof reads");
    }
  }

  void map_sample_types() {
    for (int i = 0; i < in_.sample_type_size(); ++i) {
      const std::string& type = str(in_.sample_type(i).type(), "a sample type");
      const std::string& unit = str(in_.sample_type(i).unit(), "a sample type");
      if (type == kCpuSampleType.type && unit == kCpuSampleType.unit) cpu_index_ = i;
      for (size_t v = 0; v < kProfileValueCount; ++v) {
        const PprofSampleType known = pprof_sample_type(static_cast<ProfileValue>(v));
        if (type == known.type && unit == known.unit) value_index_[v] = i;
      }
    }
    if (!cpu_index_ &&
        std::all_of(value_index_.begin(), value_index_.end(), [](const auto& i) { return !i; })) {
      return refuse(
          "no sample type hucprof knows (samples, cpu, calls, bytes, latency, "
          "subchecks): not a usercopy profile");
    }
    out_.sampling = value_index_[kSamples] || cpu_index_;
    out_.probes = value_index_[kCalls] || value_index_[kBytes] || value_index_[kSubchecks];
    out_.latency = value_index_[kLatencyNs].has_value();
    if (in_.has_period_type() && in_.period() > 0 &&
        str(in_.period_type().type(), "the period type") == kCpuSampleType.type &&
        str(in_.period_type().unit(), "the period type") == kCpuSampleType.unit) {
      out_.sample_period_ns = static_cast<uint64_t>(in_.period());
    }
  }

  void read_comments() {
    for (int64_t index : in_.comment()) {
      if (refused()) return;
      std::string_view text = str(index, "a comment");
      if (!text.starts_with(kCommentPrefix)) continue;
      text = name(index, "a comment");
      text.remove_prefix(kCommentPrefix.size());
      const size_t eq = text.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string_view key = text.substr(0, eq), value = text.substr(eq + 1);
      if (key == kCommentVersion) out_.hucprof_version = value;
      if (key == kCommentKernel) out_.kernel = value;
      if (key == kCommentHardened) out_.hardened_usercopy = value;
      if (key == kCommentMissedUncounted) out_.missed_checks_uncounted = value;
      if (key == kCommentTarget) out_.target = value;
      const bool sampled = key.starts_with(kCommentSampledPrefix);
      if (sampled || key == kCommentSkippedSamples || key.starts_with(kCommentMissedPrefix)) {
        uint64_t n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc{} || end != value.data() + value.size()) {
          return refuse("comment " + quoted_value(text) + " is not a count");
        }
        uint64_t& in_comments = sampled ? sampled_in_comments_ : missed_in_comments_;
        if (n > kMaxTotal - in_comments) {
          return refuse(std::string(sampled ? "the sampled CPU" : "the skipped runs") +
                        " of its comments add up to more than " + std::to_string(kMaxTotal));
        }
        in_comments += n;
        if (key == kCommentSkippedSamples) out_.skipped_samples = n;  // repeated: the last one
        if (sampled) {
          out_.sampled_by_context[std::string(key.substr(kCommentSampledPrefix.size()))] = n;
        } else if (key.starts_with(kCommentMissedPrefix)) {
          out_.missed_checks[std::string(key.substr(kCommentMissedPrefix.size()))] = n;
          at_most(out_.missed_checks.size(), kMaxRestKinds, "reasons for missed checks");
        }
      }
    }
  }

  void read_functions() {
    for (const auto& f : in_.function()) {
      if (refused()) return;
      if (f.id() == 0) return refuse("a function has the reserved id 0");
      str(f.name(), "a function name");
      str(f.filename(), "a function file");
      if (!functions_.emplace(f.id(), FunctionNames{f.name(), f.filename()}).second) {
        return refuse("two functions with id " + std::to_string(f.id()));
      }
    }
  }

  void read_mappings() {
    for (const auto& m : in_.mapping()) {
      if (refused()) return;
      if (m.id() == 0) return refuse("a mapping has the reserved id 0");
      std::string name = this->name(m.filename(), "a mapping file name");
      // "[nf_tables]" is a module; the kernel image (and anything else) is not.
      std::string module;
      if (name.size() > 2 && name.front() == '[' && name.back() == ']' &&
          name != kKernelMappingName) {
        module = name.substr(1, name.size() - 2);
      }
      if (!modules_.emplace(m.id(), std::move(module)).second) {
        return refuse("two mappings with id " + std::to_string(m.id()));
      }
    }
  }

  // Every location is checked here; its frames are made when a sample first uses it.
  void read_locations() {
    for (int i = 0; i < in_.location_size() && !refused(); ++i) {
      const auto& loc = in_.location(i);
      if (loc.id() == 0) return refuse("a location has the reserved id 0");
      if (loc.mapping_id() != 0 && !modules_.contains(loc.mapping_id())) {
        return refuse("location " + std::to_string(loc.id()) + " names mapping " +
                      std::to_string(loc.mapping_id()) + ", which does not exist");
      }
      for (const auto& line : loc.line()) {
        if (!functions_.contains(line.function_id())) {
          return refuse("location " + std::to_string(loc.id()) + " names function " +
                        std::to_string(line.function_id()) + ", which does not exist");
        }
        if (line.line() < 0 || line.line() > UINT32_MAX) {
          return refuse("location " + std::to_string(loc.id()) + " has line " +
                        std::to_string(line.line()));
        }
      }
      if (!locations_.emplace(loc.id(), Location{i, {}, false}).second) {
        return refuse("two locations with id " + std::to_string(loc.id()));
      }
    }
  }

  // A location is one frame. Several lines are its inlined calls, innermost first, and the
  // frame's own function last; lines with files or line numbers are the frame's source lines.
  const std::vector<FramePtr>& frames_of(uint64_t id) {
    auto found = locations_.find(id);
    if (found == locations_.end()) {
      refuse("a sample names location " + std::to_string(id) + ", which does not exist");
      return kNoFrames;
    }
    auto& location = found->second;
    if (location.made) return location.frames;
    const auto& loc = in_.location(location.index);
    const std::string module = loc.mapping_id() != 0 ? modules_.at(loc.mapping_id()) : "";
    SourceLines lines;
    bool located = false;
    for (const auto& line : loc.line()) {
      const FunctionNames& f = functions_.at(line.function_id());
      lines.push_back({name(f.name, "a function name"), name(f.file, "a function file"),
                       static_cast<uint32_t>(line.line())});
      located |= f.file != 0 || line.line() != 0;
    }
    // Unsymbolized: a name that says so, never the address.
    ProfileFrame frame{"[unknown]", module, 0, 0, nullptr};
    if (!lines.empty()) {
      frame.function = lines.back().function;
      frame.text_offset = module.empty() ? loc.address() : 0;
      if (located || lines.size() > 1) {
        frame.source = std::make_shared<const SourceLines>(std::move(lines));
      }
    }
    location.frames.push_back(std::make_shared<const ProfileFrame>(std::move(frame)));
    location.made = true;
    return location.frames;
  }

  // Samples with the same locations share one stack.
  const StackPtr& stack_of(const pprof::Sample& s) {
    key_.assign(s.location_id().begin(), s.location_id().end());
    if (auto found = stacks_.find(key_); found != stacks_.end()) return found->second;
    auto stack = std::make_shared<ProfileStack>();
    size_t name_bytes = 0;
    for (uint64_t id : key_) {
      const auto& frames = frames_of(id);
      if (stack->size() + frames.size() > limits_.max_stack_frames) {
        refuse("a sample has a stack of more than " +
               count_words(limits_.max_stack_frames, "frames"));
      }
      if (refused()) return kNoStack;
      stack->insert(stack->end(), frames.begin(), frames.end());
      for (const FramePtr& f : frames) {
        name_bytes += f->function.size();
        if (f->source) {
          for (const auto& line : *f->source) name_bytes += line.function.size() + line.file.size();
        }
      }
    }
    at_most(stacks_.size() + 1, limits_.max_stacks, "distinct stacks");
    total_frames_ += stack->size();
    total_name_bytes_ += name_bytes;
    at_most(total_frames_, limits_.max_total_frames, "frames in its distinct stacks");
    at_most(total_name_bytes_, limits_.max_total_name_bytes,
            "bytes of function names in its distinct stacks");
    if (refused()) return kNoStack;
    return stacks_.emplace(key_, std::move(stack)).first->second;
  }

  // A sample of the rest of busy CPU (pprof_format.h) is the denominator, not a stack of the
  // checks: counted by its context, and by why it was excluded from a check.
  bool rest_of_busy_cpu(const pprof::Sample& s, uint64_t samples) {
    const std::string* context = nullptr;
    const std::string* excluded = nullptr;
    const std::string* workload = nullptr;
    const std::string* kind = nullptr;
    for (const auto& label : s.label()) {
      if (label.str() == 0) continue;  // numeric labels are not ours
      const std::string& key = str(label.key(), "a label key");
      if (key == kLabelContext) context = &name(label.str(), "a label value");
      if (key == kLabelExcluded) excluded = &name(label.str(), "a label value");
      if (key == kLabelWorkload) workload = &name(label.str(), "a label value");
      if (key == kLabelWorkloadKind) kind = &name(label.str(), "a label value");
    }
    if (context == nullptr || context->empty()) return false;
    rest_by_context_[*context] += samples;
    at_most(rest_by_context_.size(), kMaxRestKinds, "contexts of the rest of busy CPU");
    const bool interrupt = excluded != nullptr && !excluded->empty();
    if (interrupt) {
      out_.excluded_samples[*excluded] += samples;
      at_most(out_.excluded_samples.size(), kMaxRestKinds, "reasons for excluded samples");
    }
    if (workload != nullptr && !workload->empty()) {
      WorkloadBusy& busy = out_.busy_by_workload[*workload];
      at_most(out_.busy_by_workload.size(), limits_.max_label_sets, "workloads");
      if (kind != nullptr) busy.kind = *kind;
      if (*context == "user") busy.user += samples;
      if (*context == "kernel") busy.kernel += samples;
      if (*context == "kernel" && interrupt) busy.interrupts += samples;
    }
    return true;
  }

  const LabelsPtr& labels_of(const pprof::Sample& s) {
    LabelKey key;
    if (std::string why = pid_label_problem(in_, s); !why.empty()) refuse(std::move(why));
    for (const auto& label : s.label()) {
      const std::string& k = str(label.key(), "a label key");
      if (label.str() == 0 && k == kLabelPid && label.num() > 0) key.pid = label.num();
      if (label.str() == 0) continue;  // numeric labels other than pid are not ours
      str(label.str(), "a label value");
      for (size_t i = 0; i < kLabelKeys.size(); ++i) {
        if (k == kLabelKeys[i]) key.strings[i] = label.str();
      }
      // An older profile's `check` is today's `step`; a profile with both keeps `step`.
      if (k == kLabelCheckBefore && key.strings[kStepKey] == 0) {
        key.strings[kStepKey] = label.str();
      }
    }
    if (refused()) return kNoLabels;
    if (auto found = labels_.find(key); found != labels_.end()) return found->second;
    at_most(labels_.size() + 1, limits_.max_label_sets, "distinct label sets");
    ProfileLabels labels;
    labels.callsite = name(key.strings[0], "a label value");
    labels.syscall = name(key.strings[1], "a label value");
    labels.check = name(key.strings[2], "a label value");
    labels.direction = name(key.strings[3], "a label value");
    labels.copy = name(key.strings[4], "a label value");
    labels.workload = name(key.strings[5], "a label value");
    labels.workload_kind = name(key.strings[6], "a label value");
    labels.comm = name(key.strings[7], "a label value");
    labels.pid = key.pid;
    if (refused()) return kNoLabels;
    return labels_.emplace(key, make_labels(std::move(labels))).first->second;
  }

  uint64_t count(int64_t value) {
    if (value < 0) refuse("a sample has a negative value");
    return value < 0 ? 0 : static_cast<uint64_t>(value);
  }

  static constexpr std::array<std::string_view, 8> kLabelKeys{
      kLabelCallsite, kLabelSyscall,  kLabelStep,         kLabelDirection,
      kLabelCopy,     kLabelWorkload, kLabelWorkloadKind, kLabelComm};
  static constexpr size_t kStepKey = 2;

  struct Location {
    int index;  // in the header's location list
    std::vector<FramePtr> frames;
    bool made;
  };

  const pprof::Profile& in_;
  const ProfileReadLimits& limits_;
  const std::unordered_map<int64_t, size_t> oversized_;
  StackProfile out_;
  std::array<std::optional<int>, kProfileValueCount> value_index_{};
  std::optional<int> cpu_index_;
  std::map<std::string, uint64_t> rest_by_context_;  // the rest-of-busy-CPU samples
  uint64_t in_checks_ = 0;
  ProfileValues totals_{};            // of every sample read, by value
  uint64_t sampled_in_comments_ = 0;  // an older file's denominator
  uint64_t missed_in_comments_ = 0;   // skipped runs: the missed checks and skipped samples
  std::map<std::string, uint64_t> in_checks_by_workload_;
  struct FunctionNames {
    int64_t name = 0, file = 0;  // string indices
  };
  std::unordered_map<uint64_t, FunctionNames> functions_;
  std::unordered_map<uint64_t, std::string> modules_;
  std::unordered_map<uint64_t, Location> locations_;
  std::vector<uint64_t> key_;
  std::unordered_map<std::vector<uint64_t>, StackPtr, StackKeyHash> stacks_;
  std::unordered_map<LabelKey, LabelsPtr, LabelKeyHash> labels_;
  std::unordered_map<std::pair<const void*, const void*>, size_t, SampleKeyHash> sample_index_;
  size_t total_frames_ = 0, total_name_bytes_ = 0;
  std::optional<std::string> refusal_;
};

ProfileFromPprof::ProfileFromPprof(const pprof::Profile& header, const ProfileReadLimits& limits,
                                   std::unordered_map<int64_t, size_t> oversized)
    : impl_(std::make_unique<Impl>(header, limits, std::move(oversized))) {}
ProfileFromPprof::~ProfileFromPprof() = default;
bool ProfileFromPprof::refused() const { return impl_->refused(); }
const std::string& ProfileFromPprof::refusal() const { return impl_->refusal(); }
void ProfileFromPprof::read_header() { impl_->read_header(); }
bool ProfileFromPprof::read_sample(const pprof::Sample& sample) {
  return impl_->read_sample(sample);
}
StackProfile ProfileFromPprof::take() { return impl_->take(); }

}  // namespace hucprof
