#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel/attach_options.h"
#include "core/kernel/privilege_plan.h"
#include "core/kernel/run_mode.h"
#include "core/profile/report_rows.h"
#include "core/workload/record_target.h"
#include "log/log_line.h"

namespace hucprof {

inline constexpr const char* kDefaultListenAddress = ":9478";
inline constexpr const char* kDefaultTelemetryPath = "/metrics";
inline constexpr const char* kDefaultConfigPath = "/etc/hucprof/hucprof.yaml";

struct RunOptions {
  // --mode, --probe.*, --latency, --bpf.*: what to attach and how, as the attach plan reads it.
  AttachOptions attach;
  // --web.listen-address, repeatable: every address is served alike.
  std::vector<std::string> listen_addresses{kDefaultListenAddress};
  std::string telemetry_path = kDefaultTelemetryPath;  // --web.telemetry-path
  // --web.systemd-socket: serve on the sockets systemd passes (socket activation) instead.
  bool systemd_socket = false;
  uint32_t sample_frequency = 99;             // --sample-frequency, Hz per CPU (1..1000)
  std::chrono::milliseconds interval{10000};  // --interval (e.g. "10s", "500ms", "1m")
  uint32_t top_k = 20;                        // --top-k (1..1000)
  std::string log_level = "info";             // --log.level: debug|info|warn|error
  LogFormat log_format = LogFormat::Text;     // --log.format: text|logfmt|json
  std::optional<std::string> config_path;     // --config FILE
  // --capabilities.keep: what stays after attaching (core/kernel/privilege_plan.h says why).
  CapabilityKeep capabilities_keep = default_capability_keep();
  // Where kernel facts come from; overridable so tests and containers can point elsewhere.
  std::string kallsyms_path = "/proc/kallsyms";
  // --web.config.file: TLS and basic auth, exporter-toolkit's format; "" serves plain HTTP.
  std::string web_config_file;

  // --prediction.window: the span usercopy_checks_off_speedup_ratio and its kin cover.
  std::chrono::milliseconds prediction_window{300'000};

  // --debuginfo.path: a vmlinux with debuginfo, or a directory to search like /usr/lib/debug;
  // "" searches the distributions' places, "none" goes without (core/symbols/debuginfo_search.h).
  std::string debuginfo_path;
  // --debuginfo.debuginfod: ask the servers in DEBUGINFOD_URLS by build-id when no file matches.
  bool debuginfo_debuginfod = false;
};

// `hucprof record`: the run pipeline without the HTTP server, into one pprof file.
struct RecordOptions {
  // --duration; unset: 30 s, or as long as COMMAND runs when one is given.
  std::optional<std::chrono::milliseconds> duration;
  std::string output = "usercopy.pb.gz";  // -o / --output
  std::vector<std::string> command;       // after "--": run it and record while it runs
  // -a, -p, -C, -G, --only-command as given; core/workload/record_target.h decides what they mean.
  RecordTargetFlags target;
};

// `hucprof report FILE`: the table and verdict of a recorded profile.
struct ReportOptions {
  std::string input = RecordOptions().output;  // like `perf report` reads perf.data
  std::optional<std::string> flamegraph;       // --flamegraph out.svg
  std::optional<std::vector<SortKey>> sort;    // --sort callsite,syscall: the table by these
  std::optional<double> percent_limit;         // --percent-limit PCT: rows below it hidden
  bool folded = false;                         // --folded: folded stacks on stdout, no report
  std::optional<std::string> diff;             // --diff BASE.pb.gz: the change from BASE
};

// `hucprof top`: the call sites ranked live, from this node's own programs or a daemon's /metrics.
struct TopOptions {
  std::optional<std::string> from;  // --from URL: read a running daemon instead of attaching
  std::string from_ca_file;         // --from.ca-file: the CAs an https --from is checked against
  std::chrono::milliseconds delay{1000};  // -d / --delay: between refreshes (and drains)
  std::optional<uint64_t> iterations;     // -n / --iterations: stop after so many refreshes
  bool cumulative = false;                // -S / --cumulative: since start, not the interval
};

enum class CommandKind { Run, Doctor, Version, Record, Report, Top };

struct Command {
  CommandKind kind = CommandKind::Run;
  RunOptions run;  // doctor and record use it too
  RecordOptions record;
  ReportOptions report;
  TopOptions top;
};

// Result of parsing argv (+ the YAML config it names). When `command` is empty, print
// `message` (to stdout if exit_code == 0, e.g. --help; else to stderr) and exit with exit_code.
struct ParseOutcome {
  std::optional<Command> command;
  int exit_code = 0;
  std::string message;
};

// `hucprof run|doctor|record|report|top|version [flags]`. Flags win over the config file; unknown
// flags or config keys, bad values and unreadable files are errors naming the flag, or the file and
// line.
ParseOutcome parse_command_line(int argc, const char* const* argv);

const char* mode_name(Mode mode);

}  // namespace hucprof
