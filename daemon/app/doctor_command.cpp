#include "app/doctor_command.h"

#include <cstdio>
#include <string>
#include <vector>

#include "app/kernel_view.h"
#include "core/address_ranges.h"
#include "core/probe_targets.h"

namespace hucprof {

namespace {

void row(const char* what, bool ok, const std::string& detail) {
  std::printf("  %-22s %-4s %s\n", what, ok ? "yes" : "no", detail.c_str());
}

struct TargetVerdict {
  std::string name;
  std::string exact;  // kallsyms name or ""
  std::string fentry_error;
  bool fentry = false;
  bool kprobe = false;
};

}  // namespace

int doctor_command(const RunOptions& options) {
  auto loaded = load_kernel_view(options.kallsyms_path);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    std::printf("hucprof doctor\n  kallsyms               no   %s\n\n", error->c_str());
    std::printf("verdict: `hucprof run` cannot start: %s\n", error->c_str());
    return 1;
  }
  const KernelView& kernel = std::get<KernelView>(loaded);
  const KernelFacts& f = kernel.facts;

  std::printf("hucprof doctor — kernel %s\n\nKernel\n", f.release.c_str());
  row("BTF", f.btf.ok, f.btf.detail);
  row("perf_event sampling", f.perf_events.ok, f.perf_events.detail);
  row("kprobes", f.kprobes.ok, f.kprobes.detail);
  std::printf("  %-22s %-4s %s\n", "lockdown", "", f.lockdown.c_str());
  std::string paranoid = std::to_string(f.perf_event_paranoid);
  if (f.perf_event_paranoid >= 3) {
    paranoid += " — a service holding CAP_PERFMON without CAP_SYS_ADMIN (the systemd unit) will "
                "be refused sampling and kprobes here; fentry is not affected. To allow: "
                "kernel.perf_event_paranoid=2 (/usr/share/hucprof/sysctl/)";
  }
  std::printf("  %-22s %-4s %s\n", "perf_event_paranoid", "", paranoid.c_str());
  row("kernel config", f.config.has_value(), f.config_source);
  row("kallsyms", true, std::to_string(kernel.kallsyms.size()) + " text symbols, addresses visible");
  row("hardened usercopy", kernel.hardened.enabled, kernel.hardened.reason);

  std::printf("\nProbe targets\n");
  std::vector<TargetVerdict> verdicts;
  for (const ProbeTarget& t : probe_targets()) {
    TargetVerdict v;
    v.name = std::string(t.symbol);
    for (const auto& sym : kernel.kallsyms.find_normalized(t.symbol)) {
      if (sym.name.find(".cold") == std::string::npos) {
        v.exact = sym.name;
        break;
      }
    }
    if (v.exact.empty()) {
      std::printf("  %-26s absent (inlined or not built in): not probed\n", v.name.c_str());
      verdicts.push_back(v);
      continue;
    }
    v.fentry_error = f.btf.ok ? fentry_attach_error(v.exact) : f.btf.detail;
    v.fentry = v.fentry_error.empty();
    v.kprobe = f.kprobes.ok;
    std::printf("  %-26s symbol %s; fentry: %s; kprobe: %s\n", v.name.c_str(), v.exact.c_str(),
                v.fentry ? "yes" : ("no — " + v.fentry_error).c_str(),
                v.kprobe ? "yes" : "no");
    verdicts.push_back(v);
  }

  auto ranges = build_address_ranges(kernel.kallsyms, dispatcher_symbols());
  const bool can_sample = f.perf_events.ok && f.btf.ok && !ranges.ranges.empty();
  const TargetVerdict& check = verdicts.front();
  // With the checks off `run` attaches no probe (nothing would run under them), and that is
  // not an error.
  const bool can_probe = kernel.hardened.enabled && f.btf.ok && !check.exact.empty() &&
                         ((options.probe_attach != ProbeAttach::Kprobe && check.fentry) ||
                          (options.probe_attach != ProbeAttach::Fentry && check.kprobe));

  std::string plan;
  bool ok = true;
  switch (options.mode) {
    case Mode::Auto:
      ok = can_sample || can_probe || !kernel.hardened.enabled;
      plan = std::string("sampling ") + (can_sample ? "on" : "off") + ", probes " +
             (can_probe ? (check.fentry && options.probe_attach != ProbeAttach::Kprobe
                               ? "on (fentry)"
                               : "on (kprobe)")
                        : "off");
      break;
    case Mode::Probe:
      ok = can_probe || !kernel.hardened.enabled;
      plan = can_probe                  ? "probes on"
             : kernel.hardened.enabled ? "cannot probe __check_object_size"
                                        : "probes off (the checks are off on this kernel)";
      break;
    case Mode::Sample:
      ok = can_sample;
      plan = can_sample ? "sampling on" : "cannot sample";
      break;
  }
  std::printf("\nverdict: `hucprof run --mode %s` %s: %s\n", mode_name(options.mode),
              ok ? "will run" : "cannot start", plan.c_str());
  if (!kernel.hardened.enabled) {
    std::printf("note: the hardened usercopy checks are off on this kernel; there is nothing "
                "to measure\n");
  }
  return ok ? 0 : 1;
}

}  // namespace hucprof
