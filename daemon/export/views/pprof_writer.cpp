#include "export/views/pprof_writer.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/base/quoted_value.h"
#include "core/cost/usercopy_cost.h"
#include "export/pprof/pprof_format.h"
#include "export/views/count_lookup.h"
#include "export/views/pausing_output_stream.h"
#include "export/views/report_text.h"
#include "google/protobuf/arena.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/gzip_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace hucprof {

namespace {

// pprof's string table: index 0 is always "". Every string is written as printable_name: valid
// UTF-8 (protobuf's string type; Go's pprof prints it on a terminal) of at most the
// kMaxNameBytes that `hucprof report` reads back, whatever DWARF, kallsyms or a cgroup named.
class StringTable {
 public:
  explicit StringTable(pprof::Profile& out) : out_(out) { index(""); }
  int64_t index(std::string_view s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int64_t>(out_.string_table_size());
    out_.add_string_table(printable_name(s));
    ids_.emplace(std::string(s), id);
    return id;
  }

 private:
  pprof::Profile& out_;
  std::map<std::string, int64_t, std::less<>> ids_;
};

// The values a profile carries, in the order of its sample types.
std::vector<ProfileValue> carried_values(const StackProfile& p) {
  std::vector<ProfileValue> values;
  if (p.sampling) values.push_back(kSamples);
  if (p.probes) {
    values.push_back(kCalls);
    values.push_back(kBytes);
    if (p.latency) values.push_back(kLatencyNs);
    values.push_back(kSubchecks);
  }
  return values;
}

void add_sample_type(pprof::Profile& out, StringTable& strings, PprofSampleType type) {
  auto* t = out.add_sample_type();
  t->set_type(strings.index(type.type));
  t->set_unit(strings.index(type.unit));
}

class LocationTable {
 public:
  LocationTable(pprof::Profile& out, StringTable& strings) : out_(out), strings_(strings) {
    kernel_ = out_.add_mapping();
    kernel_->set_id(1);
    kernel_->set_filename(strings_.index(kKernelMappingName));
    kernel_->set_has_functions(true);
  }

  uint64_t location(const ProfileFrame* frame) {
    auto [it, inserted] = locations_.try_emplace(frame, 0);
    if (!inserted) return it->second;
    auto* loc = out_.add_location();
    it->second = static_cast<uint64_t>(out_.location_size());
    loc->set_id(it->second);
    loc->set_mapping_id(mapping(frame->module));
    if (frame->module.empty()) {
      loc->set_address(frame->text_offset);
      kernel_limit_ = std::max(kernel_limit_, frame->text_offset + 1);
    }
    if (frame->source && !frame->source->empty()) {
      add_source_lines(*loc, *frame);
    } else {
      loc->add_line()->set_function_id(function(frame->function, frame->module, ""));
    }
    return it->second;
  }

  // A frame hucprof made up (kRestFrame, ...): no mapping, no address, just its name.
  uint64_t synthetic_location(std::string_view name) {
    auto [it, inserted] = synthetic_.try_emplace(std::string(name), 0);
    if (!inserted) return it->second;
    auto* loc = out_.add_location();
    it->second = static_cast<uint64_t>(out_.location_size());
    loc->set_id(it->second);
    loc->add_line()->set_function_id(function(std::string(name), "", ""));
    return it->second;
  }

  void finish() { kernel_->set_memory_limit(kernel_limit_); }

 private:
  uint64_t mapping(const std::string& module) {
    if (module.empty()) return 1;
    auto [it, inserted] = modules_.try_emplace(module, 0);
    if (inserted) {
      auto* m = out_.add_mapping();
      it->second = static_cast<uint64_t>(out_.mapping_size());
      m->set_id(it->second);
      m->set_filename(strings_.index("[" + module + "]"));
      m->set_has_functions(true);
    }
    return it->second;
  }

  // One Line per inlined function, innermost first, the frame's own function last (pprof's
  // order: "the last entry represents the caller into which the preceding entries were
  // inlined"), each with its file and line. The last keeps the exact kallsyms name the frame has
  // without debuginfo.
  void add_source_lines(pprof::Location& loc, const ProfileFrame& frame) {
    const SourceLines& lines = *frame.source;
    for (size_t i = 0; i < lines.size(); ++i) {
      const bool own = i + 1 == lines.size();
      auto* line = loc.add_line();
      line->set_function_id(
          function(own ? frame.function : lines[i].function, frame.module, lines[i].file));
      line->set_line(lines[i].line);
    }
  }

  // Functions by name, module and source file (pprof keeps the file per function).
  uint64_t function(const std::string& name, const std::string& module, const std::string& file) {
    auto [it, inserted] = functions_.try_emplace({name, module, file}, 0);
    if (inserted) {
      auto* f = out_.add_function();
      it->second = static_cast<uint64_t>(out_.function_size());
      f->set_id(it->second);
      f->set_name(strings_.index(name));
      f->set_system_name(strings_.index(name));
      if (!file.empty()) f->set_filename(strings_.index(file));
    }
    return it->second;
  }

  pprof::Profile& out_;
  StringTable& strings_;
  pprof::Mapping* kernel_;
  uint64_t kernel_limit_ = 1;
  std::unordered_map<const ProfileFrame*, uint64_t> locations_;
  std::map<std::string, uint64_t, std::less<>> synthetic_;
  std::map<std::string, uint64_t> modules_;
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> functions_;
};

void add_label(pprof::Sample& sample, StringTable& strings, std::string_view key,
               const std::string& value) {
  if (value.empty()) return;
  auto* label = sample.add_label();
  label->set_key(strings.index(key));
  label->set_str(strings.index(value));
}

void add_number(pprof::Sample& sample, StringTable& strings, std::string_view key, int64_t value) {
  if (value == 0) return;
  auto* label = sample.add_label();
  label->set_key(strings.index(key));
  label->set_num(value);
}

// One share of the rest of busy CPU: a workload's, or what no workload was counted for.
struct BusyPart {
  std::string workload, kind;
  uint64_t kernel = 0, user = 0, interrupts = 0, in_checks = 0;
};

// Each workload's busy CPU, then what is left of the node's (busy samples whose workload the
// kernel could not count), so that the parts add up to sampled_by_context.
std::vector<BusyPart> busy_parts(const StackProfile& profile) {
  std::vector<BusyPart> parts;
  std::map<std::string_view, uint64_t> in_checks;
  BusyPart rest{"",
                "",
                count_of(profile.sampled_by_context, "kernel"),
                count_of(profile.sampled_by_context, "user"),
                count_of(profile.excluded_samples, "interrupt"),
                0};
  for (const ProfileSample& s : profile.samples) {
    if (s.labels) in_checks[s.labels->workload] += s.values[kSamples];
    rest.in_checks += s.values[kSamples];
  }
  auto less = [](uint64_t& from, uint64_t n) { from = from > n ? from - n : 0; };
  for (const auto& [workload, busy] : profile.busy_by_workload) {
    auto it = in_checks.find(workload);
    BusyPart part{workload,  busy.kind,       busy.kernel,
                  busy.user, busy.interrupts, it == in_checks.end() ? 0 : it->second};
    less(rest.kernel, part.kernel);
    less(rest.user, part.user);
    less(rest.interrupts, part.interrupts);
    less(rest.in_checks, part.in_checks);
    parts.push_back(std::move(part));
  }
  parts.push_back(std::move(rest));
  return parts;
}

// The rest of busy CPU as samples (pprof_format.h, kRestFrame): busy kernel samples outside the
// checks and outside interrupts that landed in one, those interrupts, and user samples.
void add_rest_of_busy_cpu(const StackProfile& profile, const std::vector<ProfileValue>& values,
                          pprof::Profile& out, StringTable& strings, LocationTable& locations) {
  struct Rest {
    std::vector<std::string_view> leaf_first;
    const char* context;
    const char* excluded;
    uint64_t samples;
  };
  for (const BusyPart& part : busy_parts(profile)) {
    const uint64_t kernel_rest = part.kernel > part.in_checks + part.interrupts
                                     ? part.kernel - part.in_checks - part.interrupts
                                     : 0;
    for (const Rest& rest : {Rest{{kKernelRestFrame, kRestFrame}, "kernel", "", kernel_rest},
                             Rest{{kInterruptFrame, kKernelRestFrame, kRestFrame},
                                  "kernel",
                                  "interrupt",
                                  part.interrupts},
                             Rest{{kUserRestFrame, kRestFrame}, "user", "", part.user}}) {
      if (rest.samples == 0) continue;
      auto* sample = out.add_sample();
      for (std::string_view frame : rest.leaf_first) {
        sample->add_location_id(locations.synthetic_location(frame));
      }
      for (ProfileValue v : values) {
        const uint64_t n = v == kSamples ? rest.samples : 0;
        sample->add_value(static_cast<int64_t>(n));
        if (v == kSamples) sample->add_value(static_cast<int64_t>(n * profile.sample_period_ns));
      }
      add_label(*sample, strings, kLabelContext, rest.context);
      add_label(*sample, strings, kLabelExcluded, rest.excluded);
      add_label(*sample, strings, kLabelWorkload, part.workload);
      add_label(*sample, strings, kLabelWorkloadKind, part.kind);
    }
  }
}

void add_comment(pprof::Profile& out, StringTable& strings, std::string_view key,
                 std::string_view value) {
  out.add_comment(
      strings.index(std::string(kCommentPrefix) + std::string(key) + "=" + std::string(value)));
}

}  // namespace

namespace {
// `batch`, if given, is called with `out` every kSamplesBetweenPauses samples of the profile's
// stacks, and may take the samples made so far out of it (encode_pprof_gzip writes them out).
using SampleBatch = std::function<void(pprof::Profile&)>;
void fill_pprof(const StackProfile& profile, pprof::Profile& out,
                const std::function<void()>& pause = {}, const SampleBatch& batch = {});
}  // namespace

pprof::Profile to_pprof(const StackProfile& profile) {
  pprof::Profile out;
  fill_pprof(profile, out);
  return out;
}

namespace {

constexpr size_t kSamplesBetweenPauses = 256;

void fill_pprof(const StackProfile& profile, pprof::Profile& out,
                const std::function<void()>& pause, const SampleBatch& batch) {
  StringTable strings(out);
  // speedscope's importer takes default_sample_type (a string index) for an index into
  // sample_type: with "cpu" at string 1 it still picks cpu/nanoseconds, the second type.
  if (profile.sampling) strings.index(kCpuSampleType.type);
  const std::vector<ProfileValue> values = carried_values(profile);
  for (ProfileValue v : values) {
    add_sample_type(out, strings, pprof_sample_type(v));
    if (v == kSamples) add_sample_type(out, strings, kCpuSampleType);
  }

  LocationTable locations(out, strings);
  size_t done = 0;
  for (const ProfileSample& s : profile.samples) {
    if (++done % kSamplesBetweenPauses == 0) {
      if (pause) pause();
      if (batch) batch(out);
    }
    const bool carried =
        std::any_of(values.begin(), values.end(), [&](ProfileValue v) { return s.values[v] != 0; });
    if (!carried || !s.stack || !s.labels) continue;
    auto* sample = out.add_sample();
    for (const FramePtr& frame : *s.stack) sample->add_location_id(locations.location(frame.get()));
    for (ProfileValue v : values) {
      sample->add_value(static_cast<int64_t>(s.values[v]));
      if (v == kSamples) {
        sample->add_value(static_cast<int64_t>(s.values[v] * profile.sample_period_ns));
      }
    }
    add_label(*sample, strings, kLabelCallsite, s.labels->callsite);
    add_label(*sample, strings, kLabelSyscall, s.labels->syscall);
    add_label(*sample, strings, kLabelStep, s.labels->check);
    add_label(*sample, strings, kLabelDirection, s.labels->direction);
    add_label(*sample, strings, kLabelCopy, s.labels->copy);
    add_label(*sample, strings, kLabelWorkload, s.labels->workload);
    add_label(*sample, strings, kLabelWorkloadKind, s.labels->workload_kind);
    add_label(*sample, strings, kLabelComm, s.labels->comm);
    add_number(*sample, strings, kLabelPid, s.labels->pid);
  }
  if (profile.sampling) add_rest_of_busy_cpu(profile, values, out, strings, locations);
  locations.finish();

  out.set_time_nanos(profile.time_unix_ns);
  out.set_duration_nanos(profile.duration_ns);
  const PprofSampleType period_type = profile.sampling ? kCpuSampleType : pprof_sample_type(kCalls);
  out.mutable_period_type()->set_type(strings.index(period_type.type));
  out.mutable_period_type()->set_unit(strings.index(period_type.unit));
  out.set_period(profile.sampling ? static_cast<int64_t>(profile.sample_period_ns) : 1);
  if (!values.empty()) {
    out.set_default_sample_type(
        strings.index(profile.sampling ? kCpuSampleType.type : pprof_sample_type(kCalls).type));
  }

  if (!profile.hucprof_version.empty()) {
    add_comment(out, strings, kCommentVersion, profile.hucprof_version);
  }
  if (!profile.kernel.empty()) add_comment(out, strings, kCommentKernel, profile.kernel);
  if (!profile.hardened_usercopy.empty()) {
    add_comment(out, strings, kCommentHardened, profile.hardened_usercopy);
  }
  if (profile.latency) add_comment(out, strings, kCommentLatency, "on");
  if (!profile.target.empty()) add_comment(out, strings, kCommentTarget, profile.target);
  for (const auto& [reason, n] : profile.missed_checks) {
    add_comment(out, strings, std::string(kCommentMissedPrefix) + reason, std::to_string(n));
  }
  if (!profile.missed_checks_uncounted.empty()) {
    add_comment(out, strings, kCommentMissedUncounted, profile.missed_checks_uncounted);
  }
  if (profile.skipped_samples) {
    add_comment(out, strings, kCommentSkippedSamples, std::to_string(*profile.skipped_samples));
  }
  // `pprof -top` gives shares without saying how sure they are or over what: the headline as
  // `hucprof report` prints it for this profile says both.
  if (profile.sampling) {
    const UsercopyCost cost = summarize_cost(profile, 0);
    if (auto line = headline(cost, headline_estimate(cost),
                             "over the profile's " + format_seconds(cost.window_seconds))) {
      add_comment(out, strings, kCommentHeadline, line->line());
    }
    // And the shares under it that -top cannot show: each costly call site's, with its steps,
    // each with its 95 % interval and samples, as the report's table gives them.
    for (size_t i = 0; i < cost.callsites.size() && i < kCommentCallsites; ++i) {
      const CallsiteCost& row = cost.callsites[i];
      add_comment(out, strings, std::string(kCommentCallsitePrefix) + printable_name(row.callsite),
                  format_part(row.samples, cost.busy_samples()) + " of busy CPU via " +
                      printable_name(row.syscall) + "; steps " + format_steps(row, true));
    }
  }
  // Busy contexts are samples (above); idle is not busy CPU, so it stays a comment.
  if (profile.sampling) {
    if (auto idle = profile.sampled_by_context.find("idle");
        idle != profile.sampled_by_context.end()) {
      add_comment(out, strings, std::string(kCommentSampledPrefix) + idle->first,
                  std::to_string(idle->second));
    }
  }
}

}  // namespace

namespace {

// Serializes a Profile into `to` a batch of samples at a time, so that the whole message is never
// held (its samples are most of it): the same bytes as SerializeToString, which writes fields in
// number order: sample_type (1), then sample (2), then the rest, which samples never refer to.
class StreamedProfile {
 public:
  explicit StreamedProfile(google::protobuf::io::CodedOutputStream& to) : to_(to) {}

  // Writes the samples `profile` holds, and takes them out of it (its cleared messages are reused
  // for the next ones).
  void samples(pprof::Profile& profile) {
    if (!types_written_) {
      for (const auto& type : profile.sample_type()) write(kSampleTypeField, type);
      types_written_ = true;
    }
    for (const auto& sample : profile.sample()) write(kSampleField, sample);
    profile.mutable_sample()->Clear();
  }

  // The samples left and every other field.
  void rest(pprof::Profile& profile) {
    samples(profile);
    profile.clear_sample_type();
    profile.ByteSizeLong();  // the sizes SerializeWithCachedSizes writes
    profile.SerializeWithCachedSizes(&to_);
  }

 private:
  static constexpr int kSampleTypeField = 1;
  static constexpr int kSampleField = 2;

  void write(int field, const google::protobuf::MessageLite& message) {
    using google::protobuf::internal::WireFormatLite;
    to_.WriteTag(WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    to_.WriteVarint32(static_cast<uint32_t>(message.ByteSizeLong()));
    message.SerializeWithCachedSizes(&to_);
  }

  google::protobuf::io::CodedOutputStream& to_;
  bool types_written_ = false;
};

}  // namespace

std::string encode_pprof_gzip(const StackProfile& profile, const std::function<void()>& pause) {
  // An arena: tens of thousands of small messages, allocated and freed at once.
  google::protobuf::Arena arena;
  auto* message = google::protobuf::Arena::CreateMessage<pprof::Profile>(&arena);
  std::string packed;
  google::protobuf::io::StringOutputStream packed_stream(&packed);
  google::protobuf::io::GzipOutputStream::Options options;
  options.format = google::protobuf::io::GzipOutputStream::GZIP;
  options.compression_level = 1;  // zlib's fastest, as GzipLevel::Fastest says why
  google::protobuf::io::GzipOutputStream gzip(&packed_stream, options);
  {
    PausingOutputStream pausing(gzip, pause);
    google::protobuf::io::CodedOutputStream coded(&pausing);
    StreamedProfile streamed(coded);
    fill_pprof(profile, *message, pause, [&](pprof::Profile& out) { streamed.samples(out); });
    if (pause) pause();
    streamed.rest(*message);
    if (coded.HadError()) throw std::runtime_error("zlib could not compress the profile");
  }
  if (!gzip.Close()) {
    throw std::runtime_error("zlib could not compress the profile: " +
                             std::string(gzip.ZlibErrorMessage() ? gzip.ZlibErrorMessage() : "?"));
  }
  return packed;
}

}  // namespace hucprof
