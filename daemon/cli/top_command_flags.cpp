#include "cli/top_command_flags.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>

#include "core/base/message_text.h"
#include "core/text/duration.h"
#include "core/text/metrics_url.h"

namespace hucprof {
namespace {

// As `hucprof run`'s --interval: below this a drain costs more than the interval tells.
constexpr std::chrono::milliseconds kMinDelay{100};
constexpr std::chrono::milliseconds kMaxDelay{3'600'000};
constexpr uint64_t kMaxIterations = 1'000'000'000;

// top's -d takes seconds as a bare number ("2", "0.5"); hucprof's durations ("1s", "500ms")
// are taken too.
std::string as_duration(const std::string& text) {
  const bool number = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.';
  });
  return number ? text + "s" : text;
}

}  // namespace

void add_top_flags(CLI::App* app, TopFlags& flags) {
  flags.from = app->add_option("--from", flags.from_url,
                               "read a running daemon's /metrics (http://HOST:PORT or https://...; "
                               "/metrics when no path is given) instead of attaching here; "
                               "http://USER@HOST:PORT sends basic auth with the password in "
                               "HUCPROF_FROM_PASSWORD")
                   ->type_name("URL");
  flags.ca_file = app->add_option("--from.ca-file", flags.ca_file_path,
                                  "with an https --from: trust the CAs in this PEM file instead "
                                  "of the system's")
                      ->type_name("FILE");
  flags.delay = app->add_option("-d,--delay", flags.delay_text,
                                "time between refreshes (and drains), e.g. 1s, 500ms, or seconds "
                                "as top takes them (2, 0.5); 100ms..1h")
                    ->type_name("DURATION")
                    ->default_str(format_duration(TopOptions().delay));
  flags.iterations = app->add_option("-n,--iterations", flags.iterations_text,
                                     "stop after N refreshes, like top -n (when stdout is not a "
                                     "terminal: after N tables)")
                         ->type_name("N");
  app->add_flag("-S,--cumulative", flags.cumulative,
                "rank by the counts since top started instead of the last interval (the c key "
                "toggles it)");
}

std::optional<std::string> apply_top_flags(const TopFlags& flags, TopOptions& top) {
  if (flags.from->count() > 0) {
    if (auto url = parse_metrics_url(flags.from_url); !url.ok()) {
      return "--from: " + url.error().text;
    }
    top.from = flags.from_url;
  }
  if (flags.ca_file->count() > 0) {
    if (flags.ca_file_path.empty()) return std::string("--from.ca-file: empty path");
    if (!top.from || !parse_metrics_url(*top.from)->tls) {
      return std::string("--from.ca-file: only with an https --from");
    }
    top.from_ca_file = flags.ca_file_path;
  }
  if (flags.delay->count() > 0) {
    const std::string duration = as_duration(flags.delay_text);
    auto parsed = parse_duration_within(duration, kMinDelay, kMaxDelay);
    if (!parsed.ok()) {
      // The error quotes the duration: say it as typed ("0", not the "0s" made of it).
      std::string error = parsed.error().text;
      if (const size_t at = error.find(in_quotes(duration)); at != std::string::npos) {
        error.replace(at, in_quotes(duration).size(), in_quotes(flags.delay_text));
      }
      return "--delay: " + error;
    }
    top.delay = parsed.value();
  }
  if (flags.iterations->count() > 0) {
    const std::string& text = flags.iterations_text;
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n == 0 ||
        n > kMaxIterations) {
      return "--iterations: " + in_quotes(text) + " is not a whole number in 1.." +
             std::to_string(kMaxIterations);
    }
    top.iterations = n;
  }
  top.cumulative = flags.cumulative;
  return std::nullopt;
}

}  // namespace hucprof
