#include "core/drain/metrics_snapshot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "core/text/metrics_text.h"

namespace hucprof {
namespace {

constexpr std::string_view kCpuSamples = "usercopy_cpu_samples_total";
constexpr std::string_view kSampled = "usercopy_sampled_cpu_samples_total";
constexpr std::string_view kCheckSamples = "usercopy_checks_cpu_samples_total";
constexpr std::string_view kChecks = "usercopy_checks_total";
constexpr std::string_view kCheckBytes = "usercopy_check_bytes_total";
constexpr std::string_view kFrequency = "hucprof_sample_frequency_hertz";
constexpr std::string_view kAttached = "hucprof_probe_attached";
constexpr std::string_view kBuild = "hucprof_build_info";
constexpr std::string_view kHardened = "usercopy_hardened_enabled";
constexpr std::string_view kDrains = "hucprof_drains_total";
constexpr std::array<std::string_view, 10> kRead{kCpuSamples, kSampled,   kCheckSamples, kChecks,
                                                 kCheckBytes, kFrequency, kAttached,     kBuild,
                                                 kHardened,   kDrains};

// The largest count a double holds exactly; a counter above it has lost its last units anyway.
constexpr double kMaxCount = 9007199254740992.0;

Result<uint64_t> count_of(double value) {
  if (std::isnan(value)) return Error{"NaN is not a count"};
  if (!(value >= 0) || value > kMaxCount || value != std::floor(value)) {
    return Error{"a count must be a whole number from 0 to 2^53"};
  }
  return static_cast<uint64_t>(value);
}

std::string label(const MetricSample& sample, std::string_view name) {
  for (const auto& [key, value] : sample.labels) {
    if (key == name) return value;
  }
  return {};
}

Result<void> require(const MetricSample& sample, std::initializer_list<std::string_view> names) {
  for (const std::string_view name : names) {
    const bool present = std::any_of(sample.labels.begin(), sample.labels.end(),
                                     [&](const auto& l) { return l.first == name; });
    if (!present) return Error{"the label " + std::string(name) + " is missing"};
  }
  return {};
}

// A series once: its name and every label, in a canonical order.
std::string series_identity(const MetricSample& sample) {
  auto labels = sample.labels;
  std::sort(labels.begin(), labels.end());
  std::string out(sample.name);
  for (const auto& [key, value] : labels) {
    out += '\0' + key + '\0' + value;
  }
  return out;
}

using Triple = std::tuple<std::string, std::string, std::string>;

struct Reading {
  std::set<std::string> seen;
  std::map<Triple, uint64_t> cpu_samples;  // callsite, syscall, step
  std::map<std::string, uint64_t> sampled;
  std::optional<uint64_t> check_samples;  // absent from a daemon older than the total
  std::map<Triple, std::pair<uint64_t, uint64_t>> checks;  // callsite, syscall, direction
  std::optional<uint64_t> frequency;
  std::map<std::pair<std::string, std::string>, bool> attached;  // target, mode
  std::optional<hucprof::v1::BuildInfo> build;
  std::optional<bool> hardened;
  uint64_t drains = 0;

  Result<void> take(const MetricSample& s) {
    if (!seen.insert(series_identity(s)).second) return Error{"a series is given twice"};
    if (s.name == kCpuSamples) {
      if (auto ok = require(s, {"callsite", "syscall", "step"}); !ok.ok()) return ok;
      auto n = count_of(s.value);
      if (!n.ok()) return n.error();
      cpu_samples[{label(s, "callsite"), label(s, "syscall"), label(s, "step")}] += n.value();
    } else if (s.name == kSampled) {
      if (auto ok = require(s, {"context"}); !ok.ok()) return ok;
      auto n = count_of(s.value);
      if (!n.ok()) return n.error();
      sampled[label(s, "context")] += n.value();
    } else if (s.name == kCheckSamples) {
      auto n = count_of(s.value);
      if (!n.ok()) return n.error();
      check_samples = check_samples.value_or(0) + n.value();
    } else if (s.name == kChecks || s.name == kCheckBytes) {
      if (auto ok = require(s, {"callsite", "syscall", "direction"}); !ok.ok()) return ok;
      auto n = count_of(s.value);
      if (!n.ok()) return n.error();
      auto& [calls, bytes] =
          checks[{label(s, "callsite"), label(s, "syscall"), label(s, "direction")}];
      (s.name == kChecks ? calls : bytes) += n.value();
    } else if (s.name == kFrequency) {
      auto n = count_of(s.value);
      if (!n.ok()) return n.error();
      frequency = n.value();
    } else if (s.name == kAttached) {
      if (auto ok = require(s, {"target", "mode"}); !ok.ok()) return ok;
      attached[{label(s, "target"), label(s, "mode")}] = s.value == 1;
    } else if (s.name == kBuild) {
      build.emplace();
      build->set_version(label(s, "version"));
      build->set_libbpf(label(s, "libbpf"));
      build->set_kernel(label(s, "kernel"));
    } else if (s.name == kHardened) {
      hardened = s.value == 1;
    } else if (s.name == kDrains) {
      auto n = count_of(s.value);
      if (!n.ok()) return n.error();
      drains = n.value();
    }
    return {};
  }

  hucprof::v1::Snapshot snapshot() const {
    hucprof::v1::Snapshot out;
    uint64_t named_samples = 0;
    for (const auto& [key, n] : cpu_samples) {
      named_samples += n;
      auto* series = out.add_cpu_samples();
      series->set_callsite(std::get<0>(key));
      series->set_syscall(std::get<1>(key));
      series->set_step(std::get<2>(key));
      series->set_samples(n);
    }
    for (const auto& [context, n] : sampled) {
      auto* series = out.add_sampled();
      series->set_context(context);
      series->set_samples(n);
    }
    for (const auto& [key, counts] : checks) {
      auto* series = out.add_checks();
      series->set_callsite(std::get<0>(key));
      series->set_syscall(std::get<1>(key));
      series->set_direction(std::get<2>(key));
      series->set_calls(counts.first);
      series->set_bytes(counts.second);
    }
    out.set_check_samples(check_samples.value_or(named_samples));
    out.set_sample_frequency_hz(frequency.value_or(0));
    for (const auto& [key, on] : attached) {
      auto* probe = out.add_probes();
      probe->set_target(key.first);
      probe->set_mode(key.second == "none" ? "" : key.second);
      probe->set_attached(on);
    }
    if (build) *out.mutable_build() = *build;
    out.set_hardened_usercopy_enabled(hardened.value_or(true));
    out.set_intervals(drains);
    return out;
  }
};

}  // namespace

Result<hucprof::v1::Snapshot> snapshot_from_metrics(std::string_view text) {
  Reading reading;
  auto read = read_metrics_text(
      text,
      [](std::string_view name) {
        return std::find(kRead.begin(), kRead.end(), name) != kRead.end();
      },
      [&](const MetricSample& sample) { return reading.take(sample); });
  if (!read.ok()) return read.error();
  if (reading.sampled.empty() && reading.attached.empty()) {
    return Error{"no hucprof counters: neither " + std::string(kSampled) + " nor " +
                 std::string(kAttached) + " is on the page"};
  }
  return reading.snapshot();
}

}  // namespace hucprof
