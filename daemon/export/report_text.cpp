#include "export/report_text.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "core/quoted_value.h"
#include "export/missed_text.h"

namespace hucprof {

namespace {

constexpr size_t kWidth = 100;
constexpr size_t kWorkloadRows = 10;

std::string printf_string(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// Every name in the report came from the profile file: printable_name, so that it can neither
// act on the terminal nor fill it.
std::string frame_name(const ProfileFrame& f) {
  const std::string function = printable_name(f.function);
  return f.module.empty() ? function : function + " [" + printable_name(f.module) + "]";
}

// A frame's names in a stack line, leaf first: the calls inlined at its address (from the
// kernel's debuginfo), marked, then its own function.
std::vector<std::string> frame_words(const ProfileFrame& f) {
  std::vector<std::string> out;
  if (f.source) {
    for (size_t i = 0; i + 1 < f.source->size(); ++i) {
      out.push_back(printable_name((*f.source)[i].function) + " (inline)");
    }
  }
  out.push_back(frame_name(f));
  return out;
}

// "a <- b <- c", wrapped at kWidth with continuation lines indented.
std::string stack_line(const ProfileStack& stack, size_t indent) {
  std::vector<std::string> words;
  for (const FramePtr& frame : stack) {
    for (std::string& w : frame_words(*frame)) words.push_back(std::move(w));
  }
  std::string out, line(indent, ' ');
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string word = (i ? "<- " : "") + words[i];
    if (line.size() + word.size() + 1 > kWidth && line.size() > indent) {
      out += line + "\n";
      line = std::string(indent + 2, ' ');
    }
    if (line.size() > indent && line.back() != ' ') line += ' ';
    line += word;
  }
  return out + line + "\n";
}

std::string header(const StackProfile& p) {
  std::string out;
  std::string what;
  if (p.sampling) {
    what = "sampling every " +
           printf_string("%.3f", static_cast<double>(p.sample_period_ns) / 1e6) + " ms per CPU";
  }
  if (p.probes) {
    what += std::string(what.empty() ? "" : " + ") + "probes" + (p.latency ? " with latency" : "");
  }
  out += "profile: " + format_seconds(static_cast<double>(p.duration_ns) / 1e9);
  if (p.time_unix_ns > 0) {
    const std::time_t start = static_cast<std::time_t>(p.time_unix_ns / 1000000000);
    char when[32];
    std::tm tm{};
    gmtime_r(&start, &tm);
    std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    out += std::string(" from ") + when;
  }
  if (!p.kernel.empty()) out += ", kernel " + printable_name(p.kernel);
  if (!what.empty()) out += ", " + what;
  out += "\n";
  if (!p.hardened_usercopy.empty()) {
    out += "hardened usercopy: " + printable_name(p.hardened_usercopy) + "\n";
  }
  return out;
}

// The figures behind the headline and beside it, each saying what it is.
std::string totals(const UsercopyCost& cost) {
  if (!cost.sampling) return "";
  std::string out;
  auto cores = [&](double seconds) {
    return cost.window_seconds > 0
               ? " (" + printf_string("%.3f", seconds / cost.window_seconds) + " cores)"
               : "";
  };
  const double busy = cost.kernel_cpu_seconds + cost.user_cpu_seconds;
  out += "  busy CPU              " + pad(format_seconds(busy), 10, true) + cores(busy) +
         ": kernel " + format_seconds(cost.kernel_cpu_seconds) + ", user " +
         format_seconds(cost.user_cpu_seconds) + "\n";
  out += "  in the checks         " + pad(format_seconds(cost.check_cpu_seconds), 10, true) +
         cores(cost.check_cpu_seconds);
  if (auto share = cost.share_of_kernel()) {
    out += "; " + format_percent(*share) + " of busy kernel CPU";
  }
  out += "\n";
  if (cost.interrupt_samples) {
    out += "  interrupts in checks  " + pad(format_seconds(cost.interrupt_cpu_seconds), 10, true) +
           " " + format_interrupts(cost) + "\n";
  }
  return out;
}

std::string table(const UsercopyCost& cost) {
  if (cost.callsites.empty()) return "no usercopy check was seen in this profile\n";
  std::string out = pad("share", 8, true) + pad("CPU", 10, true) + pad("calls", 9, true) +
                    pad("bytes", 11, true) + "  " + pad("call site", 24, false) + " " +
                    pad("syscall", 12, false) + " checks" +
                    (cost.sampling ? "  (share: of busy CPU)" : "") + "\n";
  for (const CallsiteCost& row : cost.callsites) {
    out += pad(row.share ? format_percent(*row.share) : "-", 8, true) +
           pad(cost.sampling ? format_seconds(row.cpu_seconds) : "-", 10, true) +
           pad(cost.probes ? format_count(row.calls) : "-", 9, true) +
           pad(cost.probes ? format_bytes(row.bytes) : "-", 11, true) + "  " +
           pad(printable_name(row.callsite), 24, false) + " " +
           pad(printable_name(row.syscall), 12, false) + " " + format_checks(row, cost.sampling) +
           "\n";
  }
  return out;
}

std::string more_workloads(const UsercopyCost& cost) {
  if (cost.workloads.size() <= kWorkloadRows) return "";
  return "  (" + std::to_string(cost.workloads.size() - kWorkloadRows) +
         " more: the profile's workload label names them all)\n";
}

// Which workload pays, by calls: a probe-mode profile keyed by workload (no CPU to share).
std::string workload_calls_table(const UsercopyCost& cost) {
  std::string out = "\nwhich workloads run the checks (share: of the checks' calls)\n" +
                    pad("share", 8, true) + pad("checks", 12, true) + "  " +
                    pad("workload", 40, false) + " kind\n";
  const size_t shown = std::min(cost.workloads.size(), kWorkloadRows);
  for (size_t i = 0; i < shown; ++i) {
    const WorkloadCost& w = cost.workloads[i];
    out += pad(format_percent(w.share_of_checks), 8, true) +
           pad(std::to_string(w.calls), 12, true) + "  " +
           pad(printable_name(w.workload), 40, false) + " " +
           (w.kind.empty() ? "-" : printable_name(w.kind)) + "\n";
  }
  return out;
}

// Which workload pays: each workload's part of the checks' CPU, and what the checks cost it.
std::string workloads_table(const UsercopyCost& cost) {
  if (cost.workloads.empty()) return "";
  if (!cost.sampling) return workload_calls_table(cost) + more_workloads(cost);
  std::string out =
      "\nwhich workloads pay (share: of the checks' CPU; own: of the workload's busy CPU)\n" +
      pad("share", 8, true) + pad("CPU", 10, true) + pad("own", 9, true) + "  " +
      pad("workload", 40, false) + " kind\n";
  const size_t shown = std::min(cost.workloads.size(), kWorkloadRows);
  for (size_t i = 0; i < shown; ++i) {
    const WorkloadCost& w = cost.workloads[i];
    out += pad(format_percent(w.share_of_checks), 8, true) +
           pad(format_seconds(w.cpu_seconds), 10, true) +
           pad(w.share_of_busy ? format_percent(*w.share_of_busy) : "-", 9, true) + "  " +
           pad(printable_name(w.workload), 40, false) + " " +
           (w.kind.empty() ? "-" : printable_name(w.kind)) + "\n";
  }
  return out + more_workloads(cost);
}

// With the kernel's debuginfo: each copy path into the call site's checks, as the chain of the
// design card and then function by function with its file and line, call site first.
std::string copy_paths(const CallsiteCost& row, uint64_t row_total) {
  std::string out;
  for (const CopyCost& c : row.copies) {
    const std::string share =
        format_percent(static_cast<double>(c.value) / static_cast<double>(row_total));
    out += "  " + pad(share, 7, true) + "  copy: " + printable_text(copy_chain_text(c.path)) + "\n";
    for (auto step = c.path.steps.rbegin(); step != c.path.steps.rend(); ++step) {
      const std::string where =
          step->line.file.empty() ? "(no source line)" : printable_text(file_line(step->line));
      out += std::string(12, ' ') + pad(where, 36, false) + " " +
             printable_name(step->line.function) + (step->inlined ? " (inline)" : "") + "\n";
    }
  }
  return out;
}

std::string top_stacks(const UsercopyCost& cost, size_t callsites) {
  std::string out;
  const size_t n = std::min(callsites, cost.callsites.size());
  for (size_t i = 0; i < n; ++i) {
    const CallsiteCost& row = cost.callsites[i];
    uint64_t row_total = cost.sampling ? row.samples : row.calls;
    if (row.top_stacks.empty() || row_total == 0) continue;
    out += "\n" + printable_name(row.callsite) + " (" + printable_name(row.syscall) + ")";
    if (row.share) out += ", " + format_percent(*row.share) + " of busy CPU";
    out += ":\n";
    out += copy_paths(row, row_total);
    for (const StackCost& sc : row.top_stacks) {
      const std::string share =
          format_percent(static_cast<double>(sc.value) / static_cast<double>(row_total));
      std::string lines = stack_line(*sc.stack, 10);
      lines.replace(0, std::min<size_t>(10, share.size() + 2), "  " + share);
      out += lines;
    }
  }
  return out.empty() ? ""
                     : "\ntop stacks (leaf first; share of the call site's " +
                           std::string(cost.sampling ? "CPU" : "calls") + ")" + out;
}

}  // namespace

std::string format_checks(const CallsiteCost& row, bool sampling) {
  uint64_t total = 0;
  for (const auto& [check, n] : row.checks) total += n;
  std::string out;
  for (const auto& [check, n] : row.checks) {
    if (!out.empty()) out += ", ";
    if (sampling) {
      out += printable_name(check) + " " +
             printf_string("%.0f%%", 100.0 * static_cast<double>(n) / static_cast<double>(total));
    } else {
      // Sub-checks per check call: one call can run several.
      out += printable_name(check) + " " +
             (row.calls ? printf_string("%.2f/call",
                                        static_cast<double>(n) / static_cast<double>(row.calls))
                        : format_count(n));
    }
  }
  return out.empty() ? "-" : out;
}

std::optional<std::string> headline(const UsercopyCost& cost, const std::string& window) {
  const auto share = cost.share_of_busy();
  if (!share) return std::nullopt;
  return format_share(*share) +
         " of busy CPU is in the checks: " + format_count_exact(cost.check_samples) + " of " +
         format_count_exact(cost.busy_samples()) + " busy samples (kernel + user, idle left out) " +
         window;
}

std::string format_interrupts(const UsercopyCost& cost) {
  return "(" + std::to_string(cost.interrupt_samples) +
         (cost.interrupt_samples == 1 ? " sample" : " samples") +
         "): kernel CPU, not the checks' (an interrupt or softirq ran on top of a check)";
}

std::string format_share(double fraction) { return printf_string("%.2f %%", 100.0 * fraction); }

std::string format_count_exact(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_percent(double fraction) {
  const double pct = 100.0 * fraction;
  if (pct > 0 && pct < 0.01) return "<0.01 %";
  return printf_string(pct < 1 ? "%.2f %%" : "%.1f %%", pct);
}

std::string format_count(uint64_t n) {
  const double d = static_cast<double>(n);
  if (n < 1000) return std::to_string(n);
  if (n < 1000000) return printf_string("%.1fk", d / 1e3);
  if (n < 1000000000) return printf_string("%.2fM", d / 1e6);
  return printf_string("%.2fG", d / 1e9);
}

std::string format_bytes(uint64_t n) {
  const double d = static_cast<double>(n);
  if (n < 1024) return std::to_string(n) + " B";
  if (n < (1u << 20)) return printf_string("%.1f KiB", d / 1024);
  if (n < (1u << 30)) return printf_string("%.1f MiB", d / (1 << 20));
  return printf_string("%.2f GiB", d / (1 << 30));
}

std::string format_seconds(double seconds) {
  return printf_string(seconds < 10 ? "%.3f s" : "%.1f s", seconds);
}

std::string verdict_line(const StackProfile& profile, const UsercopyCost& cost) {
  if (profile.hardened_usercopy.starts_with("off")) {
    return "the checks are off on this kernel (" + printable_name(profile.hardened_usercopy) +
           "): they cost nothing here";
  }
  if (cost.sampling) {
    auto share = cost.share_of_busy();
    if (!share) return "no busy CPU was sampled in this profile: nothing to decide on";
    std::string cores = cost.cores() ? " (" + printf_string("%.3f", *cost.cores()) + " cores)" : "";
    return "the checks cost " + format_share(*share) + " of busy CPU" + cores +
           "; booting with hardened_usercopy=off would save about that much";
  }
  std::string out = "probe mode counts checks, not CPU time: " + format_count(cost.calls) +
                    " checks over " + format_bytes(cost.bytes);
  if (cost.latency && cost.window_seconds > 0) {
    const double seconds = static_cast<double>(cost.latency_ns) / 1e9;
    out += ", " + format_seconds(seconds) + " inside them by their own timing (" +
           printf_string("%.3f", seconds / cost.window_seconds) + " cores)";
  }
  return out + "; record with --mode sample or auto for the share of busy CPU";
}

std::optional<std::string> prediction_line(const StackProfile& profile, const UsercopyCost& cost) {
  if (profile.hardened_usercopy.starts_with("off")) return std::nullopt;
  const auto share = cost.share_of_busy();
  const auto speedup = cost.speedup_with_checks_off();
  if (!share || !speedup) return std::nullopt;
  return "CPU-bound work would run " + printf_string("%.3f", *speedup) +
         "x as fast with hardened_usercopy=off (1 / (1 - " + format_share(*share) +
         "); what this assumes: README, \"What would hardened_usercopy=off save?\")";
}

std::string render_report(const StackProfile& profile, const UsercopyCost& cost,
                          size_t stacks_for_top_callsites) {
  std::string out = header(profile);
  if (auto line = headline(cost, "over the profile's " + format_seconds(cost.window_seconds))) {
    out += "\n" + *line + "\n";
  }
  const std::string sums = totals(cost);
  if (!sums.empty()) out += "\n" + sums;
  out += "\n" + table(cost);
  if (auto missed = missed_checks_line(profile, cost)) out += *missed + "\n";
  out += workloads_table(cost);
  out += top_stacks(cost, stacks_for_top_callsites);
  out += "\nverdict: " + verdict_line(profile, cost) + "\n";
  if (auto prediction = prediction_line(profile, cost)) out += "prediction: " + *prediction + "\n";
  return out;
}

}  // namespace hucprof
