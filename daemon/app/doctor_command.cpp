#include "app/doctor_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include "app/attach_sessions.h"
#include "app/debuginfo_report.h"
#include "app/kernel_view.h"
#include "app/terminal_text.h"
#include "core/kernel/attach_plan.h"
#include "core/kernel/kernel_release.h"

namespace hucprof {

namespace {

void row(const char* what, bool ok, const std::string& detail) {
  print_text("  %-22s %-4s %s\n", what, ok ? "yes" : "no", detail.c_str());
}

// One target of the plan: the symbol and why, then what attaches and why, or why the kernel
// refused its program.
void print_target(const TargetPlan& t, const std::string* refused) {
  const std::string name(t.target.symbol);
  if (t.symbol.empty()) {
    print_text("  %-26s absent: %s\n", name.c_str(), t.symbol_reason.c_str());
    return;
  }
  print_text("  %-26s symbol %s (%s)\n", name.c_str(), t.symbol.c_str(), t.symbol_reason.c_str());
  if (refused) {
    print_text("  %-26s not attached: its %s program was refused: %s\n", "",
               flavour_name(t.flavour), refused->c_str());
    return;
  }
  // An attaching target's reason starts with its flavour ("fentry: the kernel took ...").
  print_text("  %-26s %s%s\n", "", t.attaches() ? "" : "not attached: ", t.reason.c_str());
}

// What the kernel does with a check that comes while the check's program is busy on its CPU, and
// whether it counts it: probe mode's counts are exact plus what the kernel says it skipped.
void print_misses(const Preemption& preemption, const LoadedSessions& sessions) {
  print_text("\nChecks the program never sees (the kernel skips it, and counts them or not)\n");
  print_text("  %-22s %-4s %s (%s): %s\n", "preemption", "", preemption.model.c_str(),
             preemption.reason.c_str(),
             preemption.programs_preemptible
                 ? "a run of the check's program can be switched out mid-run, and the kernel "
                   "skips the program for other checks on that CPU until it resumes"
                 : "a run of the check's program is never switched out mid-run");
  if (sessions.probes.session) {
    const MissedCoverage checks = sessions.probes.session->check_misses_coverage();
    if (!sessions.plan.rescue_reason.empty()) {
      print_text("  %-22s %-4s %s\n", "rescue", sessions.plan.rescue ? "yes" : "no",
                 sessions.plan.rescue_reason.c_str());
    }
    row("counts skipped checks", checks.counted,
        checks.counted ? "the kernel counts them: usercopy_checks_missed_total, and every view "
                         "beside the exact counts"
                       : checks.uncounted);
  }
  if (sessions.sampler.session) {
    const MissedCoverage samples = sessions.sampler.session->sample_misses_coverage();
    row("counts skipped samples", samples.counted,
        samples.counted ? kSamplesCounted : samples.uncounted);
  }
}

// Every BPF feature the programs use, as the kernel answered when asked about it alone, grouped
// by program type, with the first upstream release of each: what an operator of another kernel
// compares against (docs/kernels.md). Missing and unanswered ones say why.
void print_bpf_features(const BpfFeatureFacts& facts) {
  print_text("\nBPF features (each probed alone; (5.17): the first upstream release with it)\n");
  struct Group {
    std::string title;
    std::vector<std::string> present;
    std::vector<std::pair<std::string, std::string>> other;  // (how and why, names)
  };
  // Program types first, then helpers by program type, then the rest.
  auto title_of = [](const BpfFeature& f) {
    if (f.kind == BpfFeatureKind::ProgramType) return std::string("program types");
    if (f.kind == BpfFeatureKind::Helper) {
      return std::string("helpers in ") + bpf_program_name(f.program);
    }
    return std::string("map flags, kfuncs");
  };
  std::vector<Group> groups;
  for (const BpfFeature& f : bpf_feature_catalog()) {
    const std::string title = title_of(f);
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const Group& g) { return g.title == title; });
    if (group == groups.end()) group = groups.insert(groups.end(), Group{title, {}, {}});
    auto it = facts.answers.find(f.key());
    const FeatureAnswer answer = it != facts.answers.end() ? it->second : FeatureAnswer{};
    const std::string name = std::string(f.name) + " (" + std::string(f.since) + ")";
    if (answer.state == FeatureAnswer::State::Present) {
      group->present.push_back(name);
      continue;
    }
    // Features refused for one reason are listed together under it.
    const std::string why =
        (answer.state == FeatureAnswer::State::Missing ? "missing: " : "unknown: ") + answer.detail;
    auto same = std::find_if(group->other.begin(), group->other.end(),
                             [&](const auto& o) { return o.first == why; });
    if (same == group->other.end()) {
      group->other.emplace_back(why, name);
    } else {
      same->second += ", " + name;
    }
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    auto rank = [](const std::string& t) { return t == "program types" ? 0 : t[0] == 'h' ? 1 : 2; };
    return rank(a.title) < rank(b.title);
  });
  for (const Group& g : groups) {
    std::string line;
    for (const std::string& p : g.present) line += (line.empty() ? "" : ", ") + p;
    row(g.title.c_str(), g.other.empty(), line.empty() ? "none present" : line);
    for (const auto& [why, names] : g.other) {
      print_text("  %-22s      %s %s\n", "", names.c_str(), why.c_str());
    }
  }
}

}  // namespace

int doctor_command(const RunOptions& options) {
  auto loaded = load_kernel_view(options.kallsyms_path);
  if (!loaded.ok()) {
    const char* why = loaded.error().text.c_str();
    print_text("hucprof doctor\n  kallsyms               no   %s\n\n", why);
    print_text("verdict: `hucprof run` cannot start: %s\n", why);
    return loaded.error().exit_code;
  }
  const KernelView& kernel = loaded.value();
  const KernelFacts& f = kernel.facts;

  print_text("hucprof doctor — kernel %s\n\nKernel\n", f.release.c_str());
  row("BTF", f.support.btf.ok, f.support.btf.detail);
  row("perf_event sampling", f.support.perf_events.ok, f.support.perf_events.detail);
  row("kprobes", f.support.kprobes.ok, f.support.kprobes.detail);
  print_text("  %-22s %-4s %s\n", "lockdown", "", f.lockdown.c_str());
  std::string paranoid = std::to_string(f.perf_event_paranoid);
  if (f.perf_event_paranoid >= 3) {
    paranoid +=
        " — a service holding CAP_PERFMON without CAP_SYS_ADMIN (the systemd unit) will "
        "be refused sampling and kprobes here; fentry is not affected. To allow: "
        "kernel.perf_event_paranoid=2 (/usr/share/hucprof/sysctl/)";
  }
  print_text("  %-22s %-4s %s\n", "perf_event_paranoid", "", paranoid.c_str());
  row("kernel config", f.config.has_value(), f.config_source);
  row("kallsyms", true,
      std::to_string(kernel.kallsyms.size()) + " text symbols, addresses visible");
  row("hardened usercopy", kernel.hardened.enabled, kernel.hardened.reason);

  // The same plan `run` carries out, from the same options, and the very programs it loads with
  // the same settings (unloaded again when `sessions` goes): what the kernel refuses here, it
  // refuses `run` too.
  const LoadedSessions sessions =
      load_sessions(plan_attach(kernel, options.attach), options.attach.mode);
  const AttachPlan& plan = sessions.plan;
  print_text("\nProbe targets\n");
  for (size_t i = 0; i < plan.targets.size(); ++i) {
    auto refused = sessions.probes.refused.find(i);
    print_target(plan.targets[i],
                 refused != sessions.probes.refused.end() ? &refused->second : nullptr);
  }
  if (!sessions.probes.error.empty() && plan.probes) {
    print_text("  programs: not loaded: %s\n", sessions.probes.error.c_str());
  }
  if (!plan.subchecks_reason.empty())
    print_text("  sub-checks: %s\n", plan.subchecks_reason.c_str());
  if (plan.probes) print_text("  object: %s\n", plan.probe_build_reason.c_str());

  print_misses(f.support.preemption, sessions);

  print_text("\nSampling\n");
  const bool sampler_loaded = sessions.sampler.session != nullptr;
  row("perf_event cpu-clock", sampler_loaded,
      sampler_loaded ? std::to_string(plan.dispatcher_ranges.ranges.size()) +
                           " check address ranges, program loaded"
      : options.attach.mode == Mode::Probe ? plan.sampling_reason
                                           : sessions.sampler.error);
  if (plan.sampling) {
    print_text("  %-22s      %s\n", "object", plan.sampler_build_reason.c_str());
    const InterruptRanges& interrupts = plan.interrupt_ranges;
    row("interrupt entries", !interrupts.ranges.ranges.empty(),
        interrupts.summary() +
            (interrupts.ranges.ranges.empty()
                 ? "; none found, so an interrupt inside a check is counted as the check's"
                 : "; an interrupt or softirq on top of a check is kernel CPU, not the check's"));
  }

  print_bpf_features(f.support.bpf_features);

  print_text("\nBPF maps (per drain interval; drained keys are deleted)\n");
  print_text("  %-22s %u keys per map (sites, subchecks, samples%s)\n", "counters",
             plan.maps.max_keys, plan.maps.latency ? ", latency" : "; latency only with --latency");
  print_text("  %-22s %u stacks per map, %s\n", "stacks", plan.maps.max_stacks,
             plan.maps.stacks_reason.c_str());

  // The same search `run` makes; a debuginfod download (if asked for) happens here and now.
  auto debuginfo = KernelDebuginfo::find(debuginfo_settings(options, f.release), true);
  print_debuginfo(*debuginfo, loaded_modules(kernel.modules.value_or("")));

  const Verdict verdict =
      judge(options.attach.mode, kernel.hardened, loaded_outcome(sessions, options.attach.mode));
  print_text("\nverdict: `hucprof run --mode %s` %s: %s\n", mode_name(options.attach.mode),
             verdict.runs ? "will run" : "cannot start", verdict.summary.c_str());
  if (!kernel.hardened.enabled) {
    print_text(
        "note: the hardened usercopy checks are off on this kernel; there is nothing "
        "to measure: %s\n",
        checks_off_behaviour(f.release).c_str());
  }
  return verdict.runs ? 0 : 1;
}

}  // namespace hucprof
