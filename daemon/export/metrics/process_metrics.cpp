#include "export/metrics/process_metrics.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <sstream>
#include <utility>

#include "core/files/file_text.h"
#include "export/metrics/family_builder.h"

namespace hucprof {
namespace {

std::optional<unsigned long long> to_number(std::string_view token) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n')) ++i;
    size_t end = i;
    while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\n') ++end;
    if (end > i) tokens.push_back(text.substr(i, end - i));
    i = end;
  }
  return tokens;
}

std::optional<size_t> count_open_fds(const std::string& fd_dir) {
  std::error_code ec;
  size_t count = 0;
  for (std::filesystem::directory_iterator it(fd_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    ++count;
  }
  if (ec) return std::nullopt;
  return count;
}

void add_gauge(std::vector<prometheus::MetricFamily>& out, const char* name, const char* help,
               double value) {
  FamilyBuilder family(name, help, prometheus::MetricType::Gauge, {});
  family.add({}, value);
  out.push_back(std::move(family).build());
}

}  // namespace

std::optional<SelfStat> parse_self_stat(std::string_view text) {
  // comm (field 2) is in parentheses and may itself contain spaces and ')': fields resume after
  // the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const auto fields = split_spaces(text.substr(close + 1));
  // fields[0] is field 3 (state), so field n is fields[n - 3].
  const auto field = [&](size_t n) -> std::optional<unsigned long long> {
    if (fields.size() <= n - 3) return std::nullopt;
    return to_number(fields[n - 3]);
  };
  const auto utime = field(14), stime = field(15), start = field(22), vsize = field(23),
             rss = field(24);
  if (!utime || !stime || !start || !vsize || !rss) return std::nullopt;
  return SelfStat{*utime + *stime, *start, *vsize, *rss};
}

std::optional<unsigned long long> parse_boot_time(std::string_view proc_stat) {
  std::istringstream lines{std::string(proc_stat)};
  for (std::string line; std::getline(lines, line);) {
    const auto tokens = split_spaces(line);
    if (tokens.size() == 2 && tokens[0] == "btime") return to_number(tokens[1]);
  }
  return std::nullopt;
}

std::optional<unsigned long long> parse_max_open_files(std::string_view limits) {
  std::istringstream lines{std::string(limits)};
  for (std::string line; std::getline(lines, line);) {
    constexpr std::string_view kName = "Max open files";
    if (line.rfind(kName, 0) != 0) continue;
    const auto tokens = split_spaces(std::string_view(line).substr(kName.size()));
    if (tokens.empty()) return std::nullopt;
    return to_number(tokens[0]);  // soft limit; "unlimited" does not parse and is left out
  }
  return std::nullopt;
}

std::vector<prometheus::MetricFamily> process_families(const ProcSources& sources) {
  std::vector<prometheus::MetricFamily> out;
  const double ticks_per_second = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page_size = static_cast<double>(sysconf(_SC_PAGESIZE));

  const auto stat_text = read_file_text(sources.self_dir + "/stat");
  const auto stat = stat_text ? parse_self_stat(*stat_text) : std::nullopt;
  if (stat) {
    FamilyBuilder cpu("process_cpu_seconds_total",
                      "Total user and system CPU time spent in seconds.",
                      prometheus::MetricType::Counter, {});
    cpu.add({}, static_cast<double>(stat->cpu_ticks) / ticks_per_second);
    out.push_back(std::move(cpu).build());
    add_gauge(out, "process_resident_memory_bytes", "Resident memory size in bytes.",
              static_cast<double>(stat->resident_pages) * page_size);
    add_gauge(out, "process_virtual_memory_bytes", "Virtual memory size in bytes.",
              static_cast<double>(stat->virtual_bytes));
    const auto proc_stat = read_file_text(sources.stat_path);
    const auto boot = proc_stat ? parse_boot_time(*proc_stat) : std::nullopt;
    if (boot) {
      add_gauge(
          out, "process_start_time_seconds",
          "Start time of the process since unix epoch in seconds.",
          static_cast<double>(*boot) + static_cast<double>(stat->start_ticks) / ticks_per_second);
    }
  }
  if (const auto fds = count_open_fds(sources.self_dir + "/fd")) {
    add_gauge(out, "process_open_fds", "Number of open file descriptors.",
              static_cast<double>(*fds));
  }
  const auto limits = read_file_text(sources.self_dir + "/limits");
  if (const auto max_fds = limits ? parse_max_open_files(*limits) : std::nullopt) {
    add_gauge(out, "process_max_fds", "Maximum number of open file descriptors.",
              static_cast<double>(*max_fds));
  }
  return out;
}

}  // namespace hucprof
