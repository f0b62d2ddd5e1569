#include "export/views/report_text.h"

#include <algorithm>
#include <ctime>
#include <vector>

#include "core/base/as_double.h"
#include "core/base/quoted_value.h"
#include "core/cost/usercopy_cost_share.h"
#include "export/views/missed_text.h"

namespace hucprof {

namespace {

constexpr size_t kWidth = 100;
constexpr size_t kWorkloadRows = 10;
// Name columns grow with their names up to this; a longer name runs into the next column.
constexpr size_t kMaxNameColumn = 32;

std::string pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return format_count_exact(n) + " " + (n == 1 ? one : many);
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

// Words after `first`, `separator` between them, wrapped at kWidth with continuation lines
// indented by `indent` (the first line's words start after `first`, whatever its length).
std::string wrapped(std::string first, const std::vector<std::string>& words,
                    const std::string& separator, size_t indent) {
  std::string out, line = std::move(first);
  const size_t start = line.size();
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string word = words[i] + (i + 1 < words.size() ? separator : "");
    std::string trimmed = word;
    while (!trimmed.empty() && trimmed.back() == ' ') trimmed.pop_back();
    const bool fresh = i == 0 || line.size() == indent;
    if (!fresh && line.size() + trimmed.size() > kWidth && line.size() > start) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      line = std::string(indent, ' ');
    }
    line += word;
  }
  return out + line + "\n";
}

// "a <- b <- c" after `prefix`, wrapped with continuation lines indented 2 more than it.
std::string stack_line(const ProfileStack& stack, const std::string& prefix) {
  std::vector<std::string> words;
  for (const FramePtr& frame : stack) {
    for (std::string& w : frame_words(*frame)) words.push_back(std::move(w));
  }
  for (size_t i = 1; i < words.size(); ++i) words[i] = "<- " + words[i];
  return wrapped(prefix, words, " ", prefix.size() + 2);
}

std::string report_header_text(const StackProfile& p) {
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
  // `record -p/-C/-G/-- COMMAND`: every share of busy CPU below is of the target's CPU alone.
  if (!p.target.empty()) out += "busy CPU of: " + printable_name(p.target) + "\n";
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
  if (cost.share_of_kernel()) {
    out += "; " + format_percent_pm(as_double(cost.check_samples), as_double(cost.kernel_samples)) +
           " of busy kernel CPU";
  }
  out += "\n";
  if (cost.interrupt_samples) {
    out += "  interrupts in checks  " + pad(format_seconds(cost.interrupt_cpu_seconds), 10, true) +
           " " + format_interrupts(cost) + "\n";
  }
  return out;
}

// Columns for what the profile measured: samples and CPU when it sampled, the probes' exact
// calls and bytes when it probed.
std::string table(const UsercopyCost& cost) {
  if (cost.callsites.empty()) return "no usercopy check was seen in this profile\n";
  std::vector<TextColumn> columns;
  if (cost.sampling)
    columns.insert(columns.end(), {{"share", true}, {"samples", true}, {"CPU", true}});
  if (cost.probes) columns.insert(columns.end(), {{"calls", true}, {"bytes", true}});
  columns.insert(columns.end(), {{"call site"}, {"syscall"}, {"step"}});
  std::vector<std::vector<std::string>> rows;
  for (const CallsiteCost& row : cost.callsites) {
    std::vector<std::string> cells;
    if (cost.sampling) {
      cells.push_back(format_percent_pm(as_double(row.samples), as_double(cost.busy_samples())));
      cells.push_back(format_count_exact(row.samples));
      cells.push_back(format_seconds(row.cpu_seconds));
    }
    if (cost.probes) {
      cells.push_back(format_count(row.calls));
      cells.push_back(format_bytes(row.bytes));
    }
    cells.push_back(printable_name(row.callsite));
    cells.push_back(printable_name(row.syscall));
    cells.push_back(format_steps(row, cost.sampling));
    rows.push_back(std::move(cells));
  }
  const char* legend =
      !cost.sampling ? "call sites (exact counts; step: runs per check call)"
      : cost.probes  ? "call sites (share: of busy CPU ±95 %; step: of the call site's samples; "
                       "calls, bytes: exact)"
                     : "call sites (share: of busy CPU, ± its 95 % interval; step: of the call "
                       "site's samples)";
  return std::string(legend) + "\n" + render_table(columns, rows);
}

std::string more_workloads(const UsercopyCost& cost) {
  if (cost.workloads.size() <= kWorkloadRows) return "";
  return "  (" + std::to_string(cost.workloads.size() - kWorkloadRows) +
         " more: the profile's workload label names them all)\n";
}

// Which workload pays, by calls: a probe-mode profile keyed by workload (no CPU to share).
std::string workload_calls_table(const UsercopyCost& cost) {
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < std::min(cost.workloads.size(), kWorkloadRows); ++i) {
    const WorkloadCost& w = cost.workloads[i];
    rows.push_back({format_percent(w.share_of_checks), format_count_exact(w.calls),
                    printable_name(w.workload), w.kind.empty() ? "-" : printable_name(w.kind)});
  }
  return "\nwhich workloads run the checks (share: of the checks' calls; exact counts)\n" +
         render_table({{"share", true}, {"checks", true}, {"workload"}, {"kind"}}, rows);
}

// Which workload pays: each workload's part of the checks' samples, and what the checks cost it.
std::string workloads_table(const UsercopyCost& cost) {
  if (cost.workloads.empty()) return "";
  if (!cost.sampling) return workload_calls_table(cost) + more_workloads(cost);
  uint64_t in_checks = 0;
  for (const WorkloadCost& w : cost.workloads) in_checks += w.samples;
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < std::min(cost.workloads.size(), kWorkloadRows); ++i) {
    const WorkloadCost& w = cost.workloads[i];
    rows.push_back(
        {format_percent_pm(as_double(w.samples), as_double(in_checks)),
         format_count_exact(w.samples), format_seconds(w.cpu_seconds),
         w.share_of_busy ? format_percent_pm(as_double(w.samples), as_double(w.busy_samples)) : "-",
         printable_name(w.workload), w.kind.empty() ? "-" : printable_name(w.kind)});
  }
  return "\nwhich workloads pay (share: of the checks' samples; own: of the workload's busy "
         "samples; ±: 95 %)\n" +
         render_table({{"share", true},
                       {"samples", true},
                       {"CPU", true},
                       {"own", true},
                       {"workload"},
                       {"kind"}},
                      rows) +
         more_workloads(cost);
}

// A part of a call site's samples (sampling, with its interval and its own samples) or calls
// (probes, exact), as the first column of its stack and copy lines.
std::string part_of_row(uint64_t value, uint64_t row_total, bool sampling) {
  return "  " +
         (sampling ? pad(format_part(value, row_total), 20, true)
                   : pad(format_percent(as_double(value) / as_double(row_total)), 7, true)) +
         "  ";
}

// With the kernel's debuginfo: each copy path into the call site's checks, as the chain of the
// design card and then function by function with its file and line, call site first.
std::string copy_paths(const CallsiteCost& row, uint64_t row_total, bool sampling) {
  std::string out;
  for (const CopyCost& c : row.copies) {
    const std::string first = part_of_row(c.value, row_total, sampling);
    out += first + "copy: " + printable_text(copy_chain_text(c.path)) + "\n";
    for (auto step = c.path.steps.rbegin(); step != c.path.steps.rend(); ++step) {
      const std::string where =
          step->line.file.empty() ? "(no source line)" : printable_text(file_line(step->line));
      out += std::string(first.size() + 2, ' ') + pad(where, 36, false) + " " +
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
    if (cost.sampling && cost.busy_samples() > 0) {
      out += ", " + format_percent_pm(as_double(row.samples), as_double(cost.busy_samples())) +
             " of busy CPU, " + plural(row.samples, "sample", "samples");
    } else {
      out += ", " + plural(row.calls, "call", "calls");
    }
    out += ":\n";
    out += copy_paths(row, row_total, cost.sampling);
    for (const StackCost& sc : row.top_stacks) {
      out += stack_line(*sc.stack, part_of_row(sc.value, row_total, cost.sampling));
    }
  }
  if (out.empty()) return "";
  return std::string("\ntop stacks (leaf first; share of the call site's ") +
         (cost.sampling ? "samples ± its 95 % interval; (n): its samples)" : "calls, exact)") + out;
}

// Which design effect every interval of a recording is taken with, and why that one.
std::string recording_intervals() {
  return "(every 95 % interval here: Wilson's at design effect " +
         printf_string("%.1f", kMinDesignEffect) +
         ", the least, as a profile file keeps no per-drain counts to measure its own; "
         "docs/metrics.md)";
}

}  // namespace

std::string render_table(const std::vector<TextColumn>& columns,
                         const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const TextColumn& c : columns) widths.push_back(c.header.size());
  for (const auto& row : rows) {
    for (size_t i = 0; i + 1 < row.size(); ++i) {
      const size_t cap = columns[i].right ? row[i].size() : kMaxNameColumn;
      widths[i] = std::max(widths[i], std::min(row[i].size(), cap));
    }
  }
  auto line_start = [&](const std::vector<std::string>& cells) {
    std::string out = " ";
    for (size_t i = 0; i + 1 < cells.size(); ++i) {
      out += " " + pad(cells[i], widths[i], columns[i].right) + " ";
    }
    return out;
  };
  std::vector<std::string> headers;
  for (const TextColumn& c : columns) headers.push_back(c.header);
  std::string out = line_start(headers) + headers.back() + "\n";
  for (const auto& row : rows) {
    const std::string start = line_start(row);
    std::vector<std::string> items;
    for (size_t at = 0, next; at <= row.back().size(); at = next + 2) {
      next = row.back().find(", ", at);
      if (next == std::string::npos) next = row.back().size();
      items.push_back(row.back().substr(at, next - at));
    }
    out += wrapped(start, items, ", ", start.size());
  }
  return out;
}

std::string report_header(const StackProfile& profile) { return report_header_text(profile); }

std::string format_steps(const CallsiteCost& row, bool sampling) {
  uint64_t total = 0;
  for (const auto& [step, n] : row.checks) total += n;
  std::string out;
  for (const auto& [step, n] : row.checks) {
    if (!out.empty()) out += ", ";
    if (sampling) {
      const ShareEstimate e = estimate_share(as_double(n), as_double(total));
      out += printable_name(step) + " " + printf_string("%.0f%%", 100.0 * e.share) + " " +
             format_plus_minus(100.0 * e.share, e.interval, 0) + " (" + format_count_exact(n) + ")";
    } else {
      // Step runs per check call: one call can run several.
      out += printable_name(step) + " " +
             (row.calls ? printf_string("%.2f/call", as_double(n) / as_double(row.calls))
                        : format_count(n));
    }
  }
  return out.empty() ? "-" : out;
}

ShareEstimate headline_estimate(const UsercopyCost& cost, double design_effect) {
  return estimate_share(as_double(cost.check_samples), as_double(cost.busy_samples()),
                        cost.window_seconds, design_effect);
}

std::string collecting_words(const ShareEstimate& e, double span,
                             std::optional<double> longest_span) {
  std::string out =
      "collecting: " + plural(static_cast<uint64_t>(e.k), "sample", "samples") + " in the checks";
  if (!e.needed_span) return out;
  if (longest_span && *e.needed_span > *longest_span) {
    return out + "; at this rate a verdict needs a " + format_wait(*e.needed_span) +
           " window, longer than --prediction.window";
  }
  return out + ", about " + format_wait(std::max(0.0, *e.needed_span - span)) +
         " more at this rate";
}

std::optional<Headline> headline(const UsercopyCost& cost, const ShareEstimate& estimate,
                                 const std::string& window, std::optional<double> longest_span) {
  if (!cost.share_of_busy()) return std::nullopt;
  const std::string samples = format_count_exact(cost.check_samples) + " of " +
                              format_count_exact(cost.busy_samples()) +
                              " busy samples (kernel + user, idle left out) " + window;
  if (!estimate.decided) {
    return Headline{collecting_words(estimate, cost.window_seconds, longest_span),
                    samples + "; 95 % interval " + format_interval(estimate.interval) +
                        ", too wide to decide on"};
  }
  return Headline{format_share(estimate.share) + " of busy CPU is in the checks (95 % interval " +
                      format_interval(estimate.interval) + ")",
                  samples};
}

std::string format_interrupts(const UsercopyCost& cost) {
  return "(" + plural(cost.interrupt_samples, "sample", "samples") +
         "): kernel CPU, not the checks' (an interrupt or softirq ran on top of a check)";
}

std::optional<std::string> verdict_line(const StackProfile& profile, const UsercopyCost& cost,
                                        const ShareEstimate& estimate) {
  if (profile.hardened_usercopy.starts_with("off")) {
    return "the checks are off on this kernel (" + printable_name(profile.hardened_usercopy) +
           "): they cost nothing here";
  }
  if (cost.sampling) {
    if (!cost.share_of_busy())
      return "no busy CPU was sampled in this profile: nothing to decide on";
    if (!estimate.decided) return std::nullopt;
    std::string cores = cost.cores() ? "; " + printf_string("%.3f", *cost.cores()) + " cores" : "";
    return "the checks cost " + format_share(estimate.share) + " of busy CPU (95 % interval " +
           format_interval(estimate.interval) + cores +
           "); booting with hardened_usercopy=off would save about that much";
  }
  std::string out = "probe mode counts checks, not CPU time: " + format_count(cost.calls) +
                    " checks over " + format_bytes(cost.bytes) + " (exact counts)";
  if (cost.latency && cost.window_seconds > 0) {
    const double seconds = as_double(cost.latency_ns) / 1e9;
    const ShareInterval buckets = bucket_interval(seconds);
    out += ", " + format_seconds(seconds) + " inside them by their own timing (" +
           printf_string("%.3f", buckets.lower) + "-" + format_seconds(buckets.upper) +
           ": each check counted at its log2 bucket's midpoint; " +
           printf_string("%.3f", seconds / cost.window_seconds) + " cores)";
  }
  return out + "; record with --mode sample or auto for the share of busy CPU";
}

std::optional<std::string> prediction_line(const StackProfile& profile, const UsercopyCost& cost,
                                           const ShareEstimate& estimate) {
  if (profile.hardened_usercopy.starts_with("off") || !estimate.decided) return std::nullopt;
  const auto speedup = cost.speedup_with_checks_off();
  if (!cost.share_of_busy() || !speedup) return std::nullopt;
  std::string range;
  if (auto low = speedup_without(estimate.interval.lower),
      high = speedup_without(estimate.interval.upper);
      low && high) {
    range = printf_string("%.3f", *low) + "-" + printf_string("%.3fx", *high) + "; ";
  }
  return "CPU-bound work would run " + printf_string("%.3f", *speedup) +
         "x as fast with hardened_usercopy=off (" + range + "1 / (1 - " +
         format_share(estimate.share) +
         "); what this assumes: README, \"What would hardened_usercopy=off save?\")";
}

std::string render_report(const StackProfile& profile, const UsercopyCost& cost,
                          size_t stacks_for_top_callsites) {
  const ShareEstimate estimate = headline_estimate(cost);
  std::string out = report_header_text(profile);
  // The skipped samples right under the headline: they are what its denominator lacks.
  const std::optional<std::string> skipped = skipped_samples_line(profile);
  if (auto line =
          headline(cost, estimate, "over the profile's " + format_seconds(cost.window_seconds))) {
    out += "\n" + line->line() + "\n" + (skipped ? *skipped + "\n" : "") + recording_intervals() +
           "\n";
  } else if (skipped) {
    out += "\n" + *skipped + "\n";
  }
  const std::string sums = totals(cost);
  if (!sums.empty()) out += "\n" + sums;
  out += "\n" + table(cost);
  if (auto missed = missed_checks_line(profile, cost)) out += *missed + "\n";
  out += workloads_table(cost);
  out += top_stacks(cost, stacks_for_top_callsites);
  if (auto verdict = verdict_line(profile, cost, estimate)) {
    out += "\nverdict: " + *verdict + "\n";
    if (auto prediction = prediction_line(profile, cost, estimate)) {
      out += "prediction: " + *prediction + "\n";
    }
  } else {
    out += "\n" + collecting_words(estimate, cost.window_seconds) + "\n  " + kNoVerdictYet + "\n";
  }
  return out;
}

}  // namespace hucprof
