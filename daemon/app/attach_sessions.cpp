#include "app/attach_sessions.h"

#include <spdlog/spdlog.h>

#include "log/log_fields.h"

namespace hucprof {

namespace {

constexpr const char* kSamplerTarget = "cpu-clock";

void log_status(const TargetStatus& s) {
  if (s.attached) {
    spdlog::info("probe {}: attached as {} ({})", s.target, s.mode,
                 s.attach_name.empty() ? s.target : s.attach_name);
  } else if (s.reason == kClassifiedReason) {
    // The plan's choice, not a problem: the check's program counts this sub-check.
    spdlog::info("probe {}: {}", s.target, s.reason);
  } else {
    const LogFields fields(failure_fields(s.target, s.reason));
    spdlog::warn("probe {}: unavailable: {}", s.target, s.reason);
  }
}

std::string probe_failure(const ProbeSession::Loaded& probes) {
  return !probes.error.empty() ? probes.error
                               : "__check_object_size: " + probes.plan.check().reason;
}

void attach_probes(ProbeSession::Loaded loaded, AttachedSessions& out) {
  const AttachPlan& plan = loaded.plan;
  if (!plan.probes) {
    if (!plan.probes_not_tried.empty()) spdlog::info("probes: {}", plan.probes_not_tried);
    out.outcome.probe_failure = probe_failure(loaded);
    for (const auto& s : ProbeSession::statuses_of(loaded)) {
      if (plan.probes_not_tried.empty()) log_status(s);
      out.statuses.push_back(s);
    }
    return;
  }
  auto started = ProbeSession::attach(std::move(loaded));
  for (const auto& s : started.statuses) {
    log_status(s);
    out.statuses.push_back(s);
  }
  out.probes = std::move(started.session);
  out.outcome.probes = out.probes != nullptr;
  if (!out.probes) {
    out.outcome.probe_failure = !started.error.empty() ? started.error
                                : started.statuses.empty()
                                    ? "no probe target"
                                    : "__check_object_size: " + started.statuses.front().reason;
  }
}

void attach_sampler(SamplingSession::Loaded loaded, const AttachPlan& plan,
                    const RunOptions& options, AttachedSessions& out) {
  if (options.attach.mode == Mode::Probe) {
    out.outcome.sampling_failure = plan.sampling_reason;
    return;
  }
  auto started = SamplingSession::attach(std::move(loaded), options.sample_frequency);
  const TargetStatus s{.target = kSamplerTarget,
                       .attach_name = "perf_event cpu-clock",
                       .mode = "perf_event",
                       .attached = started.session != nullptr,
                       .reason = started.error};
  if (started.session) {
    spdlog::info(
        "sampler: {}; perf_event cpu-clock at {} Hz on {} CPUs (periods {}-{} ns, CPUs in turn "
        "a step apart so that no two tick in step); interrupt entries: {}",
        plan.sampler_build_reason, options.sample_frequency, started.cpus, started.min_period_ns,
        started.max_period_ns, plan.interrupt_ranges.summary());
  } else {
    const LogFields fields(failure_fields(kSamplerTarget, started.error));
    spdlog::warn("sampler: unavailable: {}", started.error);
    out.outcome.sampling_failure = started.error;
  }
  out.statuses.push_back(s);
  out.sampler = std::move(started.session);
  out.outcome.sampling = out.sampler != nullptr;
}

}  // namespace

LoadedSessions load_sessions(const AttachPlan& plan, Mode mode) {
  LoadedSessions out;
  out.probes = plan.probes ? ProbeSession::load(plan) : ProbeSession::Loaded{nullptr, plan, {}, {}};
  out.plan = out.probes.plan;
  if (mode != Mode::Probe) out.sampler = SamplingSession::load(plan);
  return out;
}

AttachOutcome loaded_outcome(const LoadedSessions& loaded, Mode mode) {
  AttachOutcome out;
  out.check_flavour = loaded.plan.check().flavour;
  out.probes = loaded.probes.session != nullptr;
  out.subchecks = loaded.plan.subchecks;
  if (!out.probes) out.probe_failure = probe_failure(loaded.probes);
  out.sampling = loaded.sampler.session != nullptr;
  out.sampling_failure = mode == Mode::Probe ? loaded.plan.sampling_reason : loaded.sampler.error;
  return out;
}

AttachedSessions attach_sessions(LoadedSessions loaded, const RunOptions& options) {
  AttachedSessions out;
  out.plan = loaded.plan;
  const AttachPlan& plan = out.plan;
  out.outcome.check_flavour = plan.check().flavour;
  out.outcome.subchecks = plan.subchecks;
  spdlog::info("BPF maps: {} keys per counter map, {} stacks per stack map ({})",
               plan.maps.max_keys, plan.maps.max_stacks, plan.maps.stacks_reason);
  if (!plan.subchecks_reason.empty()) spdlog::info("sub-checks: {}", plan.subchecks_reason);
  if (plan.helper_ranges.overflow) {
    spdlog::warn(
        "{} copy-helper ranges did not fit into BPF's {}; their callers fold as "
        "[truncated]",
        plan.helper_ranges.overflow, plan.helper_ranges.capacity);
  }
  attach_probes(std::move(loaded.probes), out);
  attach_sampler(std::move(loaded.sampler), plan, options, out);
  return out;
}

}  // namespace hucprof
