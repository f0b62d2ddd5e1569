#include "export/pprof_reader.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/quoted_value.h"
#include "export/gzip_codec.h"
#include "export/pprof_format.h"
#include "profile.pb.h"

namespace hucprof {

namespace {

// Thrown inside the reader only; read_pprof turns it into the message.
struct Malformed {
  std::string what;
};

class Reader {
 public:
  explicit Reader(const pprof::Profile& in) : in_(in) {}

  StackProfile read() {
    if (in_.string_table_size() == 0) throw Malformed{"it has no string table"};
    if (!in_.string_table(0).empty()) {
      throw Malformed{"string_table[0] must be the empty string"};
    }
    map_sample_types();
    read_comments();
    read_functions();
    read_mappings();
    read_locations();
    read_samples();
    out_.time_unix_ns = in_.time_nanos();
    out_.duration_ns = in_.duration_nanos();
    return std::move(out_);
  }

 private:
  const std::string& str(int64_t index, const char* what) const {
    if (index < 0 || index >= in_.string_table_size()) {
      throw Malformed{std::string(what) + " names string " + std::to_string(index) +
                      " of a table of " + std::to_string(in_.string_table_size())};
    }
    return in_.string_table(static_cast<int>(index));
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
      throw Malformed{
          "no sample type hucprof knows (samples, cpu, calls, bytes, latency, "
          "subchecks): not a usercopy profile"};
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
      std::string_view text = str(index, "a comment");
      if (!text.starts_with(kCommentPrefix)) continue;
      text.remove_prefix(kCommentPrefix.size());
      const size_t eq = text.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string_view key = text.substr(0, eq), value = text.substr(eq + 1);
      if (key == kCommentVersion) out_.hucprof_version = value;
      if (key == kCommentKernel) out_.kernel = value;
      if (key == kCommentHardened) out_.hardened_usercopy = value;
      if (key.starts_with(kCommentSampledPrefix)) {
        uint64_t n = 0;
        auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc{} || end != value.data() + value.size()) {
          throw Malformed{"comment " + quoted_value(text) + " is not a count"};
        }
        out_.sampled_by_context[std::string(key.substr(kCommentSampledPrefix.size()))] = n;
      }
    }
  }

  void read_functions() {
    for (const auto& f : in_.function()) {
      if (f.id() == 0) throw Malformed{"a function has the reserved id 0"};
      Function function{str(f.name(), "a function name"), str(f.filename(), "a function file")};
      if (!functions_.emplace(f.id(), std::move(function)).second) {
        throw Malformed{"two functions with id " + std::to_string(f.id())};
      }
    }
  }

  void read_mappings() {
    for (const auto& m : in_.mapping()) {
      if (m.id() == 0) throw Malformed{"a mapping has the reserved id 0"};
      std::string name = str(m.filename(), "a mapping file name");
      // "[nf_tables]" is a module; the kernel image (and anything else) is not.
      std::string module;
      if (name.size() > 2 && name.front() == '[' && name.back() == ']' &&
          name != kKernelMappingName) {
        module = name.substr(1, name.size() - 2);
      }
      if (!modules_.emplace(m.id(), std::move(module)).second) {
        throw Malformed{"two mappings with id " + std::to_string(m.id())};
      }
    }
  }

  // A location is one frame. Several lines are its inlined calls, innermost first, and the
  // frame's own function last; lines with files or line numbers are the frame's source lines.
  void read_locations() {
    for (const auto& loc : in_.location()) {
      if (loc.id() == 0) throw Malformed{"a location has the reserved id 0"};
      std::string module;
      if (loc.mapping_id() != 0) {
        auto m = modules_.find(loc.mapping_id());
        if (m == modules_.end()) {
          throw Malformed{"location " + std::to_string(loc.id()) + " names mapping " +
                          std::to_string(loc.mapping_id()) + ", which does not exist"};
        }
        module = m->second;
      }
      SourceLines lines;
      bool located = false;
      for (const auto& line : loc.line()) {
        auto f = functions_.find(line.function_id());
        if (f == functions_.end()) {
          throw Malformed{"location " + std::to_string(loc.id()) + " names function " +
                          std::to_string(line.function_id()) + ", which does not exist"};
        }
        if (line.line() < 0 || line.line() > UINT32_MAX) {
          throw Malformed{"location " + std::to_string(loc.id()) + " has line " +
                          std::to_string(line.line())};
        }
        lines.push_back({f->second.name, f->second.file, static_cast<uint32_t>(line.line())});
        located |= !f->second.file.empty() || line.line() != 0;
      }
      ProfileFrame frame{"[unknown]", module, 0, module.empty() ? loc.address() : 0, nullptr};
      if (!lines.empty()) {
        frame.function = lines.back().function;
        if (located || lines.size() > 1) {
          frame.source = std::make_shared<const SourceLines>(std::move(lines));
        }
      } else {
        // Unsymbolized: a name that says so, never the address.
        frame.text_offset = 0;
      }
      std::vector<FramePtr> frames{std::make_shared<const ProfileFrame>(std::move(frame))};
      if (!locations_.emplace(loc.id(), std::move(frames)).second) {
        throw Malformed{"two locations with id " + std::to_string(loc.id())};
      }
    }
  }

  void read_samples() {
    const int types = in_.sample_type_size();
    for (const auto& s : in_.sample()) {
      if (s.value_size() != types) {
        throw Malformed{"a sample has " + std::to_string(s.value_size()) + " values for " +
                        std::to_string(types) + " sample types"};
      }
      ProfileSample sample;
      auto stack = std::make_shared<ProfileStack>();
      for (uint64_t id : s.location_id()) {
        auto loc = locations_.find(id);
        if (loc == locations_.end()) {
          throw Malformed{"a sample names location " + std::to_string(id) +
                          ", which does not exist"};
        }
        stack->insert(stack->end(), loc->second.begin(), loc->second.end());
      }
      sample.stack = std::move(stack);
      for (size_t v = 0; v < kProfileValueCount; ++v) {
        if (value_index_[v]) sample.values[v] = count(s.value(*value_index_[v]));
      }
      // A profile with CPU time but no sample count (another tool's): one "sample" per period.
      if (!value_index_[kSamples] && cpu_index_) {
        const uint64_t ns = count(s.value(*cpu_index_));
        if (out_.sample_period_ns == 0) out_.sample_period_ns = 1;
        sample.values[kSamples] = ns / out_.sample_period_ns;
      }
      ProfileLabels labels;
      for (const auto& label : s.label()) {
        const std::string& key = str(label.key(), "a label key");
        if (label.str() == 0) continue;  // numeric labels are not ours
        const std::string& value = str(label.str(), "a label value");
        if (key == kLabelCallsite) labels.callsite = value;
        if (key == kLabelSyscall) labels.syscall = value;
        if (key == kLabelCheck) labels.check = value;
        if (key == kLabelDirection) labels.direction = value;
        if (key == kLabelCopy) labels.copy = value;
      }
      sample.labels = make_labels(std::move(labels));
      out_.samples.push_back(std::move(sample));
    }
  }

  static uint64_t count(int64_t value) {
    if (value < 0) throw Malformed{"a sample has a negative value"};
    return static_cast<uint64_t>(value);
  }

  const pprof::Profile& in_;
  StackProfile out_;
  std::array<std::optional<int>, kProfileValueCount> value_index_{};
  std::optional<int> cpu_index_;
  struct Function {
    std::string name, file;
  };
  std::unordered_map<uint64_t, Function> functions_;
  std::unordered_map<uint64_t, std::string> modules_;
  std::unordered_map<uint64_t, std::vector<FramePtr>> locations_;
};

}  // namespace

std::variant<StackProfile, std::string> read_pprof(std::string_view file_bytes) {
  if (file_bytes.empty()) return std::string("empty file");
  std::string inflated;
  if (looks_gzipped(file_bytes)) {
    Inflated result = gzip_decompress(file_bytes, kMaxProfileBytes);
    if (!result.error.empty()) return result.error;
    inflated = std::move(result.bytes);
    file_bytes = inflated;
  }
  if (file_bytes.size() > kMaxProfileBytes) {
    return "larger than " + std::to_string(kMaxProfileBytes >> 20) + " MiB";
  }
  pprof::Profile message;
  if (!message.ParseFromArray(file_bytes.data(), static_cast<int>(file_bytes.size()))) {
    return std::string("not a pprof profile (the protobuf message does not parse)");
  }
  try {
    return Reader(message).read();
  } catch (const Malformed& e) {
    return "not a valid pprof profile: " + e.what;
  }
}

}  // namespace hucprof
