// hucprof: where do the kernel's hardened-usercopy checks cost CPU, per call site.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include <bpf/libbpf.h>
#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

#include "app/build_info.h"
#include "app/doctor_command.h"
#include "app/record_command.h"
#include "app/report_command.h"
#include "app/run_command.h"
#include "app/signal_inbox.h"
#include "app/top_command.h"
#include "cli/options.h"
#include "log/logging.h"

namespace {

// libbpf's own messages (verifier logs, attach errors, object loading) all go through our logger
// at debug: a normal run stays quiet, --log.level=debug shows everything. Warnings too, since
// expected failures (feature probes) warn.
int libbpf_print(enum libbpf_print_level, const char* format, va_list args) {
  if (!spdlog::should_log(spdlog::level::debug)) return 0;  // not formatted at all otherwise
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
  // A verifier log is many lines: each its own log line (every log line is one line: a line
  // break inside one would read "\n"), marked as libbpf's as the first one is.
  std::string_view rest = text;
  for (bool first = true; !rest.empty(); first = false) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    if (!line.empty()) spdlog::debug("{}{}", first ? "" : "libbpf: ", line);
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }
  return n;
}

// libprotobuf's own messages ("[libprotobuf ERROR ...] String field ... contains invalid UTF-8")
// would be a second, foreign line beside hucprof's error; what they say is hucprof's to decide
// (the pprof reader refuses such a file itself). Shown at debug, as libbpf's are.
void protobuf_log(google::protobuf::LogLevel, const char* file, int line,
                  const std::string& message) {
  spdlog::debug("libprotobuf: {}:{}: {}", file, line, message);
}

int dispatch(const hucprof::Command& command, const hucprof::SettingsSource& source) {
  // Only run, record and top read signals; the others end at Ctrl-C as any command does.
  if (command.kind != hucprof::CommandKind::Run && command.kind != hucprof::CommandKind::Record &&
      command.kind != hucprof::CommandKind::Top) {
    hucprof::hold_daemon_signals(false);
  }
  switch (command.kind) {
    case hucprof::CommandKind::Version:
      std::printf("hucprof %s (libbpf %s)\n", hucprof::hucprof_version(),
                  hucprof::libbpf_version().c_str());
      return 0;
    case hucprof::CommandKind::Doctor:
      return hucprof::doctor_command(command.run);
    case hucprof::CommandKind::Run:
      return hucprof::run_command(command.run, source);
    case hucprof::CommandKind::Record:
      return hucprof::record_command(command.run, command.record);
    case hucprof::CommandKind::Report:
      return hucprof::report_command(command.report);
    case hucprof::CommandKind::Top:
      return hucprof::top_command(command.run, command.top);
  }
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  hucprof::hold_daemon_signals(true);  // before the first thing that takes time
  // One malloc arena for every thread, set before any starts: malloc_trim after a drain gives
  // back the free pages at the top of the main arena only, and a thread's own arena (the
  // debuginfo lookups allocate and free megabytes there) would keep them resident.
  mallopt(M_ARENA_MAX, 1);
  // Until the flags say otherwise: text on stderr, so even a failure while parsing is logged
  // there and not on stdout.
  hucprof::configure_logging(hucprof::LogFormat::Text, "info");
  // Nothing should throw this far; if something does (out of memory), say so in one log line
  // and exit 1 instead of abort()ing with a bare "terminate called".
  try {
    auto outcome = hucprof::parse_command_line(argc, argv);
    if (!outcome.command) {
      if (outcome.exit_code == 0) {
        std::printf("%s\n", outcome.message.c_str());  // --help
      } else {
        hucprof::print_stderr_line(outcome.message);
      }
      return outcome.exit_code;
    }
    const auto& command = *outcome.command;
    hucprof::configure_logging(command.run.log_format, command.run.log_level);
    libbpf_set_print(libbpf_print);
    google::protobuf::SetLogHandler(protobuf_log);
    // SIGHUP parses the very same command line again, so the config file is read and checked
    // exactly as at start-up and flags still win over it.
    const hucprof::SettingsSource source = [argc, argv] {
      return hucprof::parse_command_line(argc, argv);
    };
    return dispatch(command, source);
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
  }
  return 1;
}
