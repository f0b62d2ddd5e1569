#include "export/web_view.h"

#include <algorithm>
#include <ctime>

#include "core/usercopy_cost.h"
#include "export/flame_graph_svg.h"
#include "export/markup_escape.h"
#include "export/report_text.h"

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

// The page reloads itself once per drain interval, at most once a second.
int64_t refresh_seconds(const WebViewInput& in) {
  return std::max<int64_t>(in.interval.count() / 1000, 1);
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
  if (in.last_interval.duration_ns > 0) {
    window = format_seconds(static_cast<double>(in.last_interval.duration_ns) / 1e9) + " ending " +
             utc_time(in.last_interval.time_unix_ns + in.last_interval.duration_ns);
  }
  out += fact("last interval", e(window) + " (drains so far: " + std::to_string(s.intervals()) +
                                   ", this page reloads every " +
                                   std::to_string(refresh_seconds(in)) + " s)");
  if (cost.sampling) {
    out += fact("busy kernel CPU", e(format_seconds(cost.kernel_cpu_seconds)) + " in the interval");
  }
  out += fact("hucprof", e(s.build().version()) + ", libbpf " + e(s.build().libbpf()));
  return out + "</table>\n";
}

std::string callsite_table(const UsercopyCost& cost, const std::string& telemetry_path) {
  if (cost.callsites.empty()) {
    return "<p>No usercopy check was seen in the last interval.</p>\n";
  }
  std::string out =
      "<table id=\"callsites\">\n<tr><th>share of busy kernel CPU</th><th>CPU</th><th>calls</th>"
      "<th>bytes</th><th>call site</th><th>syscall</th><th>which check</th></tr>\n";
  const size_t rows = std::min(cost.callsites.size(), kMaxCallsiteRows);
  for (size_t i = 0; i < rows; ++i) {
    const CallsiteCost& row = cost.callsites[i];
    const std::string checks = format_checks(row, cost.sampling);
    out += "<tr><td class=\"n\">" +
           e(row.share_of_kernel ? format_percent(*row.share_of_kernel) : "-") +
           "</td><td class=\"n\">" + e(cost.sampling ? format_seconds(row.cpu_seconds) : "-") +
           "</td><td class=\"n\">" + e(cost.probes ? format_count(row.calls) : "-") +
           "</td><td class=\"n\">" + e(cost.probes ? format_bytes(row.bytes) : "-") +
           "</td><td><code>" + e(row.callsite) + "</code></td><td><code>" + e(row.syscall) +
           "</code></td><td>" + e(checks) + "</td></tr>\n";
  }
  out += "</table>\n";
  if (cost.callsites.size() > rows) {
    out += "<p>" + std::to_string(cost.callsites.size() - rows) +
           " more call sites: see <a href=\"" + e(telemetry_path.substr(1)) + "\">" +
           e(telemetry_path) + "</a> or the profile.</p>\n";
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

std::string flame_graph(const StackProfile& profile) {
  const char* title = profile.sampling
                          ? "CPU in the usercopy checks, last interval (cpu-clock samples)"
                          : "usercopy checks, last interval (calls)";
  return render_profile_flame_graph(profile, title);
}

}  // namespace

std::string render_web_view(const WebViewInput& in) {
  const UsercopyCost cost = summarize_cost(in.last_interval, 0);  // the flame graph has stacks
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"refresh\" content=\"" + std::to_string(refresh_seconds(in)) + "\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>hucprof — " + e(in.snapshot.build().kernel()) + "</title>\n<style>" + kStyle +
         "</style>\n</head><body>\n";
  out +=
      "<h1>hucprof</h1>\n<p class=\"lede\">The CPU cost of the kernel's hardened-usercopy "
      "checks (CONFIG_HARDENED_USERCOPY), per kernel call site.</p>\n";
  out += facts(in, cost);
  out += "<h2>Verdict, last interval</h2>\n<p class=\"verdict\" id=\"verdict\">" +
         e(verdict_line(in.last_interval, cost)) + "</p>\n";
  out += "<h2>Top call sites, last interval</h2>\n" + callsite_table(cost, in.telemetry_path);
  out += "<h2>Flame graph, last interval</h2>\n<div class=\"flame\">\n" +
         flame_graph(in.last_interval) + "</div>\n";
  out += "<h2>Probes</h2>\n" + probe_table(in.snapshot);
  out += "<footer><a href=\"" + e(in.telemetry_path.substr(1)) + "\">" + e(in.telemetry_path) +
         "</a> · <a href=\"debug/pprof/usercopy\">profile "
         "since start (pprof)</a> · <a href=\"debug/pprof/usercopy?seconds=30\">profile of the "
         "next 30 s</a> · <code>go tool pprof -http=: URL</code> reads them</footer>\n";
  out += "</body></html>\n";
  return out;
}

HttpHandler make_web_view_handler(std::function<WebViewInput()> input) {
  return [input = std::move(input)](const HttpRequest&) {
    HttpResponse r;
    r.content_type = "text/html; charset=utf-8";
    r.body = render_web_view(input());
    r.headers = {
        {"Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:"},
        {"X-Content-Type-Options", "nosniff"},
        {"Cache-Control", "no-store"}};
    return r;
  };
}

}  // namespace hucprof
