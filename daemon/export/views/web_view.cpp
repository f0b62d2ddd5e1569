#include "export/views/web_view.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <iterator>
#include <map>
#include <optional>

#include "core/base/quoted_value.h"
#include "core/cost/usercopy_cost.h"
#include "core/profile/shown_windows.h"
#include "core/text/duration.h"
#include "export/views/flame_graph_svg.h"
#include "export/views/markup_escape.h"
#include "export/views/missed_text.h"
#include "export/views/report_text.h"

namespace hucprof {

namespace {

constexpr size_t kMaxCallsiteRows = 20;

constexpr const char* kStyle =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5rem auto;"
    "max-width:1240px;padding:0 1rem;color:#1f2328;background:#fff}"
    "h1{font-size:1.6rem;margin:0 0 .2rem}h2{font-size:1.15rem;margin:1.6rem 0 .5rem}"
    "p.lede{margin:0 0 1rem;color:#57606a}"
    "table{border-collapse:collapse;font-size:.9rem}"
    "th,td{padding:.25rem .6rem;border-bottom:1px solid #d0d7de;text-align:left;"
    "vertical-align:top}th{background:#f6f8fa}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}"
    "table.facts th{background:none;font-weight:600}"
    ".yes{color:#1a7f37;font-weight:600}.no{color:#cf222e;font-weight:600}"
    ".headline{font-size:1.5rem;font-weight:600;margin:.6rem 0 .1rem}"
    ".verdict{font-size:1.1rem;padding:.6rem .8rem;background:#f6f8fa;border-left:4px solid "
    "#0969da}"
    ".flame svg{max-width:100%;height:auto;border:1px solid #d0d7de}"
    "code{font-family:ui-monospace,monospace}footer{margin-top:2rem;color:#57606a;"
    "font-size:.85rem}";

std::string e(std::string_view text) { return markup_escape(text); }

std::string utc_time(int64_t unix_ns) {
  const std::time_t t = static_cast<std::time_t>(unix_ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%H:%M:%S UTC", &tm);
  return buf;
}

std::string fact(const std::string& what, const std::string& html_value) {
  return "<tr><th>" + e(what) + "</th><td>" + html_value + "</td></tr>\n";
}

// Not once per drain: the numbers move with a window of minutes, and a reload loses the reader's
// scroll position and the flame graph's tooltips.
int64_t reload_seconds(const WebViewInput& in) {
  return std::max<int64_t>(kReloadSeconds, in.interval.count() / 1000);
}

// "over the last 5m (--prediction.window, ...), 2m10s of it so far"; `brief`, for the flame
// graph's title, leaves out the parenthesis.
std::string window_words(const WebViewInput& in, bool brief = false) {
  const auto covered = std::chrono::milliseconds(in.window.duration_ns / 1000000);
  std::string out = "over the last " + format_duration(in.prediction_window);
  if (!brief) out += " (--prediction.window, the window of usercopy_checks_busy_cpu_ratio)";
  if (covered + in.interval < in.prediction_window) {
    out += ", " + format_duration(std::chrono::duration_cast<std::chrono::seconds>(covered)) +
           " of it so far";
  }
  return out;
}

// The design effects /metrics' gauges take from the same snapshot (the window's drains' spread),
// so the page's intervals are theirs: the headline's, and each call site's it names. Where it
// names none (before the sampling estimator has written one, a call site top-K folds into
// "other"), the least one, and the page says so.
struct DesignEffects {
  double headline = kMinDesignEffect;
  std::map<std::string, double, std::less<>> callsites;

  explicit DesignEffects(const hucprof::v1::Snapshot& s) {
    for (const auto& p : s.predictions()) {
      if (p.estimator() != "sampling" || !(p.design_effect() > 0)) continue;
      headline = p.design_effect();
      for (const auto& site : p.callsites()) {
        if (site.design_effect() > 0) callsites[site.callsite()] = site.design_effect();
      }
    }
  }
  std::optional<double> of_callsite(std::string_view callsite) const {
    const auto found = callsites.find(callsite);
    if (found == callsites.end()) return std::nullopt;
    return found->second;
  }
};

double prediction_window_seconds(const WebViewInput& in) {
  return std::chrono::duration<double>(in.prediction_window).count();
}

std::string headline_block(const WebViewInput& in, const UsercopyCost& cost,
                           const ShareEstimate& estimate) {
  std::string out;
  if (auto line = headline(cost, estimate, window_words(in), prediction_window_seconds(in))) {
    out += "<p class=\"headline\" id=\"headline\">" + e(line->lead) + "</p>\n";
    out += "<p class=\"lede\" id=\"headline-detail\">" + e(line->detail) + "</p>\n";
  } else if (cost.sampling) {
    out += "<p class=\"headline\" id=\"headline\">No busy CPU sampled yet " + e(window_words(in)) +
           "</p>\n";
  }
  return out;
}

std::string facts(const WebViewInput& in, const UsercopyCost& cost) {
  const auto& s = in.snapshot;
  std::string sampling =
      s.sample_frequency_hz()
          ? "sampling at " + std::to_string(s.sample_frequency_hz()) + " Hz per CPU"
          : "sampling off";
  bool any_probe = false;
  for (const auto& p : s.probes()) any_probe |= p.attached() && p.mode() != "perf_event";
  std::string out = "<table class=\"facts\" id=\"facts\">\n";
  out += fact("kernel", "<code>" + e(s.build().kernel()) + "</code>");
  out += fact("hardened usercopy",
              std::string(s.hardened_usercopy_enabled() ? "<span class=\"yes\">on</span>"
                                                        : "<span class=\"no\">off</span>") +
                  " — " + e(s.hardened_usercopy_reason()));
  out += fact("mode", "<code>--mode " + e(in.mode) + "</code>: " + e(sampling) + ", probes " +
                          (any_probe ? "attached" : "not attached"));
  std::string window = "none yet";
  if (in.window.duration_ns > 0) {
    window = format_seconds(static_cast<double>(in.window.duration_ns) / 1e9) + " ending " +
             utc_time(in.window.time_unix_ns + in.window.duration_ns);
  }
  out += fact("window", e(window) + " (drains so far: " + std::to_string(s.intervals()) +
                            ", one every " + e(format_duration(in.interval)) + ")");
  if (cost.sampling) {
    out += fact("busy CPU", e(format_seconds(cost.kernel_cpu_seconds + cost.user_cpu_seconds) +
                              ": kernel " + format_seconds(cost.kernel_cpu_seconds) + ", user " +
                              format_seconds(cost.user_cpu_seconds) + " (idle left out)"));
    std::string secondary = format_seconds(cost.check_cpu_seconds) + " CPU";
    if (auto cores = cost.cores()) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.3f", *cores);
      secondary += std::string(" (") + buf + " cores)";
    }
    if (cost.share_of_kernel()) {
      secondary += "; " +
                   format_percent_pm(static_cast<double>(cost.check_samples),
                                     static_cast<double>(cost.kernel_samples)) +
                   " of busy kernel CPU (secondary: the headline is of busy CPU)";
    }
    out += fact("in the checks", e(secondary));
    out += fact("interrupts in checks",
                e(format_seconds(cost.interrupt_cpu_seconds) + " " + format_interrupts(cost)) +
                    " — <code>usercopy_excluded_cpu_samples_total</code>");
  }
  if (auto missed = missed_checks_line(in.window, cost)) out += fact("checks", e(*missed));
  if (auto skipped = skipped_samples_line(in.window)) out += fact("samples", e(*skipped));
  const std::string updated = s.timestamp_unix_ms() ? utc_time(s.timestamp_unix_ms() * 1000000)
                                                    : std::string("not yet (no drain)");
  out += fact("updated",
              "<span id=\"updated\">" + e(updated) + "</span> — " +
                  (in.reload ? "this page reloads every " + std::to_string(reload_seconds(in)) +
                                   " s (<a href=\"?refresh=off\">stop reloading</a>)"
                             : std::string("not reloading (<a href=\".\">reload every ") +
                                   std::to_string(reload_seconds(in)) + " s</a>)"));
  out += fact("hucprof", e(s.build().version()) + ", libbpf " + e(s.build().libbpf()));
  return out + "</table>\n";
}

// A call site's share of busy CPU ± its 95 % interval at the design effect /metrics takes for
// it, the interval itself and where its design effect comes from in the cell's title.
std::string callsite_share_cell(const CallsiteCost& row, const UsercopyCost& cost,
                                const DesignEffects& effects) {
  const auto measured = effects.of_callsite(row.callsite);
  const ShareEstimate estimate =
      estimate_share(static_cast<double>(row.samples), static_cast<double>(cost.busy_samples()), 0,
                     measured.value_or(kMinDesignEffect));
  char d[32];
  std::snprintf(d, sizeof(d), "%.2f", estimate.design_effect);
  const std::string why = measured ? "this call site's drains, as /metrics"
                                   : "the least: /metrics names no drains of this call site";
  return "<td class=\"n\" title=\"95 % interval " + e(format_interval(estimate.interval)) +
         ", design effect " + d + " (" + e(why) + ")\">" +
         e(format_percent_pm(static_cast<double>(row.samples),
                             static_cast<double>(cost.busy_samples()), estimate.design_effect)) +
         "</td>";
}

// Sampling: each call site's share of busy CPU with its 95 % interval and samples; probes: their
// exact calls and bytes. Only the columns the window measured.
std::string callsite_table(const UsercopyCost& cost, const DesignEffects& effects,
                           const std::string& telemetry_path) {
  if (cost.callsites.empty()) {
    return "<p>No usercopy check was seen in the window.</p>\n";
  }
  std::string out = "<table id=\"callsites\">\n<tr>";
  if (cost.sampling) {
    out += "<th>share of busy CPU (± 95 % interval)</th><th>samples</th><th>CPU</th>";
  }
  if (cost.probes) out += "<th>calls (exact)</th><th>bytes (exact)</th>";
  out += std::string("<th>call site</th><th>syscall</th><th>step (") +
         (cost.sampling ? "of the call site's samples, ± 95 %" : "runs per check call, exact") +
         ")</th></tr>\n";
  const size_t rows = std::min(cost.callsites.size(), kMaxCallsiteRows);
  for (size_t i = 0; i < rows; ++i) {
    const CallsiteCost& row = cost.callsites[i];
    out += "<tr>";
    if (cost.sampling) {
      out += callsite_share_cell(row, cost, effects) + "<td class=\"n\">" +
             e(format_count_exact(row.samples)) + "</td><td class=\"n\">" +
             e(format_seconds(row.cpu_seconds)) + "</td>";
    }
    if (cost.probes) {
      out += "<td class=\"n\">" + e(format_count(row.calls)) + "</td><td class=\"n\">" +
             e(format_bytes(row.bytes)) + "</td>";
    }
    out += "<td><code>" + e(row.callsite) + "</code></td><td><code>" + e(row.syscall) +
           "</code></td><td>" + e(format_steps(row, cost.sampling)) + "</td></tr>\n";
  }
  out += "</table>\n";
  if (cost.sampling) {
    char least[16];
    std::snprintf(least, sizeof(least), "%.1f", kMinDesignEffect);
    out += std::string(
               "<p class=\"lede\" id=\"intervals\">Intervals: Wilson's 95 %; a call "
               "site's at the design effect <code>/metrics</code> takes for it from the "
               "window's drains (its bounds are the <code>usercopy_callsite_busy_cpu_"
               "lower_ratio</code> and <code>…_upper_ratio</code> gauges; hover over the "
               "share), steps' and workloads' at the least, ") +
           least + ".</p>\n";
  }
  if (cost.callsites.size() > rows) {
    out += "<p>" + std::to_string(cost.callsites.size() - rows) +
           " more call sites: see <a href=\"" + e(telemetry_path.substr(1)) + "\">" +
           e(telemetry_path) + "</a> or the profile.</p>\n";
  }
  return out;
}

// Which workload pays: shown once the samples name their workloads (sampling: their share of
// the checks' CPU), or the probes' checks do (--probe.workloads: their share of the calls).
std::string workload_table(const UsercopyCost& cost) {
  if (cost.workloads.empty()) return "";
  std::string out =
      cost.sampling
          ? "<h2>Which workloads pay</h2>\n<table id=\"workloads\">\n<tr><th>share of the "
            "checks' samples (± 95 %)</th><th>samples</th><th>CPU</th><th>share of its own "
            "busy samples (± 95 %)</th><th>workload</th><th>kind</th></tr>\n"
          : "<h2>Which workloads run the checks</h2>\n<table id=\"workloads\">\n<tr><th>share "
            "of the checks' calls (exact)</th><th>checks</th><th>workload</th><th>kind</th>"
            "</tr>\n";
  uint64_t in_checks = 0;
  for (const WorkloadCost& w : cost.workloads) in_checks += w.samples;
  const size_t rows = std::min(cost.workloads.size(), kMaxCallsiteRows);
  for (size_t i = 0; i < rows; ++i) {
    const WorkloadCost& w = cost.workloads[i];
    out += "<tr><td class=\"n\">";
    if (cost.sampling) {
      out += e(format_percent_pm(static_cast<double>(w.samples), static_cast<double>(in_checks))) +
             "</td><td class=\"n\">" + e(format_count_exact(w.samples)) + "</td><td class=\"n\">" +
             e(format_seconds(w.cpu_seconds)) + "</td><td class=\"n\">" +
             e(w.share_of_busy ? format_percent_pm(static_cast<double>(w.samples),
                                                   static_cast<double>(w.busy_samples))
                               : "-");
    } else {
      out += e(format_percent(w.share_of_checks)) + "</td><td class=\"n\">" +
             e(format_count_exact(w.calls));
    }
    out += "</td><td><code>" + e(w.workload) + "</code></td><td>" + e(w.kind) + "</td></tr>\n";
  }
  out += "</table>\n";
  if (cost.workloads.size() > rows) {
    out += "<p>" + std::to_string(cost.workloads.size() - rows) +
           " more workloads: the profile's <code>workload</code> label names them all.</p>\n";
  }
  return out;
}

std::string probe_table(const hucprof::v1::Snapshot& s) {
  std::string out =
      "<table id=\"probes\">\n<tr><th>target</th><th>attached</th><th>as</th><th>symbol</th>"
      "<th>reason</th></tr>\n";
  for (const auto& p : s.probes()) {
    out += "<tr><td><code>" + e(p.target()) + "</code></td><td>" +
           (p.attached() ? "<span class=\"yes\">yes</span>" : "<span class=\"no\">no</span>") +
           "</td><td>" + e(p.mode().empty() ? "-" : p.mode()) + "</td><td><code>" +
           e(p.attach_name()) + "</code></td><td>" + e(p.reason()) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// Titled with what the page's headline says: the share, its interval and its window.
std::string flame_graph(const WebViewInput& in, const UsercopyCost& cost,
                        const ShareEstimate& estimate) {
  std::string title = "usercopy checks (calls) " + window_words(in, true);
  if (auto line = headline(cost, estimate, window_words(in), prediction_window_seconds(in))) {
    title = line->lead + " " + window_words(in, true);
  }
  return render_profile_flame_graph(in.window, title);
}

// The profile of exactly the window the page shows, named by its end (core/profile/shown_windows.h:
// the server keeps it for the link); before any drain, the window as it will stand.
std::string window_profile_link(const WebViewInput& in) {
  const int64_t end = window_end_unix_ns(in.window);
  return "debug/pprof/usercopy?window=prediction" +
         (end > 0 ? "&end=" + std::to_string(end) : std::string());
}

}  // namespace

std::string render_web_view(const WebViewInput& in) {
  const UsercopyCost cost = summarize_cost(in.window, 0);  // the flame graph has stacks
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  if (in.reload) {
    out += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(reload_seconds(in)) + "\">\n";
  }
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>hucprof — " + e(in.snapshot.build().kernel()) + "</title>\n<style>" + kStyle +
         "</style>\n</head><body>\n";
  out +=
      "<h1>hucprof</h1>\n<p class=\"lede\">The CPU cost of the kernel's hardened-usercopy "
      "checks (CONFIG_HARDENED_USERCOPY), per kernel call site.</p>\n";
  const DesignEffects effects(in.snapshot);
  const ShareEstimate estimate = headline_estimate(cost, effects.headline);
  out += headline_block(in, cost, estimate);
  out += facts(in, cost);
  out += "<h2>Verdict</h2>\n";
  if (auto verdict = verdict_line(in.window, cost, estimate)) {
    out += "<p class=\"verdict\" id=\"verdict\">" + e(*verdict) + "</p>\n";
    if (auto prediction = prediction_line(in.window, cost, estimate)) {
      out += "<p id=\"prediction\">" + e(*prediction) + "</p>\n";
    }
  } else {
    out += "<p class=\"verdict\" id=\"verdict\">" +
           e(collecting_words(estimate, cost.window_seconds, prediction_window_seconds(in))) +
           "; " + e(kNoVerdictYet) + "</p>\n";
  }
  out += "<h2>Top call sites</h2>\n" + callsite_table(cost, effects, in.telemetry_path);
  out += workload_table(cost);
  // Appended as it is: the flame graph is most of the page, and `"…" + svg + "…"` would copy it.
  out += "<h2>Flame graph</h2>\n<div class=\"flame\">\n";
  out += flame_graph(in, cost, estimate);
  out += "</div>\n";
  out += "<h2>Probes</h2>\n" + probe_table(in.snapshot);
  out += "<footer><a href=\"" + e(in.telemetry_path.substr(1)) + "\">" + e(in.telemetry_path) +
         "</a> · <a href=\"" + e(window_profile_link(in)) +
         "\" id=\"window-profile\">profile of this page's window (pprof)</a> · <a "
         "href=\"debug/pprof/usercopy\">profile "
         "since start</a> · <a href=\"debug/pprof/usercopy?seconds=30\">profile of the "
         "next 30 s</a> · <code>go tool pprof -http=: URL</code> reads them</footer>\n";
  out += "</body></html>\n";
  return out;
}

HttpHandler make_web_view_handler(std::function<WebViewInput()> input) {
  return [input = std::move(input)](const HttpRequest& request) {
    HttpResponse r;
    const auto refresh = request.query.equal_range("refresh");
    bool reload = true;
    if (refresh.first != refresh.second) {
      if (std::next(refresh.first) != refresh.second || refresh.first->second != "off") {
        r.status = 400;
        r.body = "refresh: " +
                 (std::next(refresh.first) != refresh.second
                      ? std::string("given twice")
                      : quoted_value(refresh.first->second) + " is not \"off\"") +
                 "\n";
        return r;
      }
      reload = false;
    }
    WebViewInput in = input();
    in.reload = reload;
    r.content_type = "text/html; charset=utf-8";
    r.body = render_web_view(in);
    r.headers = {
        {"Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:"},
        {"X-Content-Type-Options", "nosniff"},
        {"Cache-Control", "no-store"}};
    return r;
  };
}

}  // namespace hucprof
