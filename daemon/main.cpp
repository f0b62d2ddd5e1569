// hucprof: where do the kernel's hardened-usercopy checks cost CPU, per call site.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <bpf/libbpf.h>
#include <spdlog/spdlog.h>

#include "app/doctor_command.h"
#include "app/record_command.h"
#include "app/report_command.h"
#include "app/run_command.h"
#include "cli/options.h"

#ifndef HUCPROF_VERSION
#define HUCPROF_VERSION "dev"
#endif

namespace {

// libbpf's own messages (verifier logs, attach errors) go through our logger at debug level,
// warnings at warn, so a normal run stays quiet and --log.level=debug shows everything.
int libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
  const auto spd_level = level == LIBBPF_WARN ? spdlog::level::debug : spdlog::level::trace;
  if (!spdlog::should_log(spd_level)) return 0;  // not formatted at all at the default level
  // A verifier log arrives as one message of any length (megabytes when a program is rejected):
  // size it first instead of trusting a fixed buffer.
  va_list sizing;
  va_copy(sizing, args);
  int n = vsnprintf(nullptr, 0, format, sizing);
  va_end(sizing);
  if (n < 0) return n;
  std::string text(static_cast<size_t>(n) + 1, '\0');
  vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<size_t>(n));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  // Warnings at debug only: expected failures (feature probes) warn too.
  spdlog::log(spd_level, "libbpf: {}", text);
  return n;
}

void setup_logging(const std::string& level) {
  // Under systemd the journal adds its own timestamps.
  if (std::getenv("JOURNAL_STREAM")) {
    spdlog::set_pattern("%l: %v");
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  }
  spdlog::set_level(spdlog::level::from_str(level));
  libbpf_set_print(libbpf_print);
}

}  // namespace

int main(int argc, char** argv) {
  auto outcome = hucprof::parse_command_line(argc, argv);
  if (!outcome.command) {
    std::fprintf(outcome.exit_code == 0 ? stdout : stderr, "%s\n", outcome.message.c_str());
    return outcome.exit_code;
  }
  const auto& command = *outcome.command;
  setup_logging(command.run.log_level);
  switch (command.kind) {
    case hucprof::CommandKind::Version:
      std::printf("hucprof %s (libbpf %u.%u)\n", HUCPROF_VERSION, libbpf_major_version(),
                  libbpf_minor_version());
      return 0;
    case hucprof::CommandKind::Doctor:
      return hucprof::doctor_command(command.run);
    case hucprof::CommandKind::Run:
      return hucprof::run_command(command.run);
    case hucprof::CommandKind::Record:
      return hucprof::record_command(command.run, command.record);
    case hucprof::CommandKind::Report:
      return hucprof::report_command(command.report);
  }
  return 2;
}
