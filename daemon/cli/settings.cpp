#include "cli/settings.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>

#include "cli/capability_names.h"
#include "core/base/message_text.h"
#include "core/base/named_values.h"
#include "core/base/text_chars.h"
#include "core/text/duration.h"
#include "core/text/listen_address.h"

namespace hucprof {
namespace {

// Below this a drain (read maps, symbolize, fold) costs more than the interval tells. Above the
// maximum the maps hold more than an interval's keys for long (they overflow, and nothing is
// exported meanwhile): an hour is a day's worth of scrapes at most intervals people use.
constexpr std::chrono::milliseconds kMinInterval{100};
constexpr std::chrono::milliseconds kMaxInterval{3'600'000};

// Whole number in [min, max]; out-of-range numbers (however large) are reported as such.
std::string apply_bounded(std::string_view value, uint32_t min, uint32_t max, uint32_t& into) {
  if (!all_digits(value)) return in_quotes(value) + " is not a whole number";
  uint64_t number = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
  const std::string range = " is out of range " + std::to_string(min) + ".." + std::to_string(max);
  if (ec == std::errc::result_out_of_range || number < min || number > max) {
    return std::string(value) + range;
  }
  into = static_cast<uint32_t>(number);
  return "";
}

// A parser's outcome stored into its option: "" when fine, else the parser's words.
template <typename T>
std::string store(Result<T> parsed, T& into) {
  if (!parsed.ok()) return parsed.error().text;
  into = std::move(parsed).value();
  return "";
}

// A switch's text (YAML 1.1 spellings too, as people write in YAML files) stored into its option.
std::string store_boolean(std::string_view value, bool& into) {
  const auto on = parse_boolean(value);
  if (!on) return in_quotes(value) + " is not a boolean (true or false)";
  into = *on;
  return "";
}

constexpr NamedValues<Mode, 3> kModes{
    {{"auto", Mode::Auto}, {"probe", Mode::Probe}, {"sample", Mode::Sample}}};
constexpr NamedValues<ProbeAttach, 3> kProbeAttach{{{"auto", ProbeAttach::Auto},
                                                    {"fentry", ProbeAttach::Fentry},
                                                    {"kprobe", ProbeAttach::Kprobe}}};
constexpr NamedValues<SubcheckCounting, 2> kProbeSubchecks{
    {{"attach", SubcheckCounting::Attach}, {"classify", SubcheckCounting::Classify}}};
constexpr NamedValues<bool, 2> kProbeRescue{{{"auto", true}, {"off", false}}};

std::string apply_mode(std::string_view value, RunOptions& options) {
  return store(find_named(kModes, value), options.attach.mode);
}

std::string append_listen_address(std::string_view value, RunOptions& options) {
  // Syntax only (no resolver, no socket): what is certainly wrong is a usage error now, not a
  // failure after start-up. Host names are resolved and ports bound when the server starts.
  if (value.empty()) return "empty address (expected host:port, :port or [::1]:port)";
  if (auto parsed = parse_listen_address(value); !parsed.ok()) {
    return in_quotes(value) + ": " + parsed.error().text;
  }
  if (std::find(options.listen_addresses.begin(), options.listen_addresses.end(), value) !=
      options.listen_addresses.end()) {
    return in_quotes(value) + " is given twice";
  }
  options.listen_addresses.emplace_back(value);
  return "";
}

std::string apply_listen_address(std::string_view value, RunOptions& options) {
  options.listen_addresses.clear();
  return append_listen_address(value, options);
}

// Where /metrics is served. The other paths are hucprof's own and stay where they are.
std::string apply_telemetry_path(std::string_view value, RunOptions& options) {
  static constexpr std::array<std::string_view, 4> kTaken{"/", "/-/healthy", "/-/ready",
                                                          "/debug/pprof/usercopy"};
  if (value.empty() || value.front() != '/') return in_quotes(value) + " does not start with /";
  if (std::find(kTaken.begin(), kTaken.end(), value) != kTaken.end()) {
    return in_quotes(value) + " is one of hucprof's other pages";
  }
  if (std::any_of(value.begin(), value.end(), [](char c) {
        return static_cast<unsigned char>(c) <= ' ' || c == '?' || c == '#' || c == 0x7f;
      })) {
    return in_quotes(value) + " holds a space, control character, '?' or '#'";
  }
  options.telemetry_path = std::string(value);
  return "";
}

std::string apply_systemd_socket(std::string_view value, RunOptions& options) {
  return store_boolean(value, options.systemd_socket);
}

std::string join(const std::vector<std::string>& values, std::string_view separator) {
  std::string out;
  for (const std::string& value : values) {
    if (!out.empty()) out += separator;
    out += value;
  }
  return out;
}

std::string apply_web_config_file(std::string_view value, RunOptions& options) {
  // Read and checked when the server starts (and re-read when it changes), naming file and line.
  // Empty is the default, plain HTTP, as with exporter-toolkit's flag: what --help shows for it
  // must be accepted back.
  options.web_config_file = std::string(value);
  return "";
}

std::string apply_sample_frequency(std::string_view value, RunOptions& options) {
  return apply_bounded(value, 1, 1000, options.sample_frequency);
}

std::string apply_interval(std::string_view value, RunOptions& options) {
  return store(parse_duration_within(value, kMinInterval, kMaxInterval), options.interval);
}

// A window shorter than a drain interval still covers one interval; a day bounds the history.
std::string apply_prediction_window(std::string_view value, RunOptions& options) {
  constexpr std::chrono::milliseconds kMin{1'000}, kMax{86'400'000};
  return store(parse_duration_within(value, kMin, kMax), options.prediction_window);
}

std::string apply_top_k(std::string_view value, RunOptions& options) {
  return apply_bounded(value, 1, 1000, options.top_k);
}

std::string apply_latency(std::string_view value, RunOptions& options) {
  return store_boolean(value, options.attach.latency);
}

std::string apply_probe_rescue(std::string_view value, RunOptions& options) {
  return store(find_named(kProbeRescue, value), options.attach.rescue);
}

std::string apply_probe_objects(std::string_view value, RunOptions& options) {
  return store_boolean(value, options.attach.objects);
}

std::string apply_probe_workloads(std::string_view value, RunOptions& options) {
  return store_boolean(value, options.attach.probe_workloads);
}

std::string apply_debuginfo_path(std::string_view value, RunOptions& options) {
  // Looked at when the daemon starts: a missing or wrong file is said then (and by doctor), and
  // the daemon runs without source lines, as it would without the debuginfo installed.
  options.debuginfo_path = std::string(value);
  return "";
}

std::string apply_debuginfo_debuginfod(std::string_view value, RunOptions& options) {
  return store_boolean(value, options.debuginfo_debuginfod);
}

std::string apply_probe_attach(std::string_view value, RunOptions& options) {
  return store(find_named(kProbeAttach, value), options.attach.probe_attach);
}

std::string apply_probe_subchecks(std::string_view value, RunOptions& options) {
  auto parsed = find_named(kProbeSubchecks, value);
  if (!kCanClassifySubchecks && parsed.ok() && parsed.value() == SubcheckCounting::Classify) {
    return "\"classify\" reads x86_64's kernel memory layout and this build is for another "
           "architecture (use attach)";
  }
  return store(std::move(parsed), options.attach.subchecks);
}

// A map holds one drain interval's keys or stacks (the daemon deletes them once drained). The
// lower bounds keep a typo from starving a busy machine, the upper ones keep a typo from asking
// the kernel for gigabytes (a stack takes ~1 KiB).
std::string apply_max_keys(std::string_view value, RunOptions& options) {
  return apply_bounded(value, 256, 1 << 20, options.attach.max_keys);
}

std::string apply_max_stacks(std::string_view value, RunOptions& options) {
  return apply_bounded(value, 64, 1 << 18, options.attach.max_stacks);
}

std::string apply_log_level(std::string_view value, RunOptions& options) {
  static constexpr std::array<std::string_view, 4> kLevels{"debug", "info", "warn", "error"};
  if (std::find(kLevels.begin(), kLevels.end(), value) == kLevels.end()) {
    return in_quotes(value) + " is not one of " + comma_list(kLevels);
  }
  options.log_level = std::string(value);
  return "";
}

std::string apply_log_format(std::string_view value, RunOptions& options) {
  const auto format = parse_log_format(value);
  if (!format) return in_quotes(value) + " is not one of " + comma_list(kLogFormatNames);
  options.log_format = *format;
  return "";
}

std::string apply_capabilities_keep(std::string_view value, RunOptions& options) {
  return store(parse_capability_keep(value), options.capabilities_keep);
}

const std::array<Setting, 22> kSettings{{
    {.key = "mode",
     .value_name = "MODE",
     .help = "what to attach: auto (sampling everywhere, probes where the kernel allows), probe, "
             "sample",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_mode,
     .show = [](const RunOptions& o) { return std::string(mode_name(o.attach.mode)); }},
    {.key = "web.listen-address",
     .value_name = "ADDR",
     .help =
         "serve /metrics on :port (every interface), host:port or [::1]:port; repeat it to serve "
         "on several",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Restart,
     .apply = apply_listen_address,
     .show = [](const RunOptions& o) { return join(o.listen_addresses, ","); },
     .append = append_listen_address},
    {.key = "web.telemetry-path",
     .value_name = "PATH",
     .help = "the path of the metrics, like node_exporter's",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Restart,
     .apply = apply_telemetry_path,
     .show = [](const RunOptions& o) { return o.telemetry_path; }},
    {.key = "web.systemd-socket",
     .value_name = "",
     .help =
         "serve on the sockets systemd passes (socket activation) instead of --web.listen-address",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Restart,
     .apply = apply_systemd_socket,
     .show = [](const RunOptions& o) { return std::string(o.systemd_socket ? "true" : "false"); }},
    // The file's contents are re-read by the web server when they change; its path is not.
    {.key = "web.config.file",
     .value_name = "FILE",
     .help = "TLS and basic auth for the web server, in Prometheus exporter-toolkit's web config "
             "format",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Restart,
     .apply = apply_web_config_file,
     .show = [](const RunOptions& o) { return o.web_config_file; }},
    {.key = "sample-frequency",
     .value_name = "HZ",
     .help = "CPU clock samples per second per CPU, 1..1000",
     .doctor = false,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_sample_frequency,
     .show = [](const RunOptions& o) { return std::to_string(o.sample_frequency); },
     .append = nullptr,
     .record_short = "F"},
    {.key = "interval",
     .value_name = "DURATION",
     .help = "how often to drain the BPF maps, e.g. 10s, 500ms, 1m; 100ms..1h",
     .doctor = false,
     .record = true,
     .on_reload = OnReload::Live,
     .apply = apply_interval,
     .show = [](const RunOptions& o) { return format_duration(o.interval); }},
    {.key = "top-k",
     .value_name = "N",
     .help = "call sites exported by name per metric, the rest as callsite=\"other\"; 1..1000",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Live,
     .apply = apply_top_k,
     .show = [](const RunOptions& o) { return std::to_string(o.top_k); }},
    {.key = "latency",
     .value_name = "",
     .help = "also time each check (fexit/kretprobe): usercopy_check_duration_seconds",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_latency,
     .show = [](const RunOptions& o) { return std::string(o.attach.latency ? "true" : "false"); }},
    {.key = "prediction.window",
     .value_name = "DURATION",
     .help =
         "span of the predicted speed-up with the checks off (usercopy_checks_off_speedup_ratio), "
         "1s..24h",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Restart,
     .apply = apply_prediction_window,
     .show = [](const RunOptions& o) { return format_duration(o.prediction_window); }},
    {.key = "probe.attach",
     .value_name = "HOW",
     .help =
         "how probes attach: auto (fentry where the kernel allows, else kprobe), fentry, kprobe",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_probe_attach,
     .show =
         [](const RunOptions& o) {
           return std::string(name_of(kProbeAttach, o.attach.probe_attach));
         }},
    {.key = "probe.subchecks",
     .value_name = "HOW",
     .help =
         "how probe mode counts sub-checks (the steps stack_object, vmap_area, virt_addr_valid, "
         "slab_object): classify (decided inside the check's probe from the object's address, as "
         "mm/usercopy.c decides; also the kind of object copied) or attach (a probe at each "
         "sub-check function: more program runs per copy)",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_probe_subchecks,
     .show =
         [](const RunOptions& o) {
           return std::string(name_of(kProbeSubchecks, o.attach.subchecks));
         }},
    {.key = "probe.workloads",
     .value_name = "",
     .help =
         "also key probe mode's counts by the workload (systemd unit, container, pod, cgroup) of "
         "the task that ran the check: usercopy_workload_checks_total (one more helper call per "
         "check)",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_probe_workloads,
     .show =
         [](const RunOptions& o) {
           return std::string(o.attach.probe_workloads ? "true" : "false");
         }},
    {.key = "probe.objects",
     .value_name = "",
     .help =
         "also count probe mode's slab checks by the object's slab cache and whether the copy fell "
         "inside the cache's usercopy region: usercopy_object_checks_total{object,region} (with "
         "--probe.subchecks classify; a map lookup or two more per slab check)",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_probe_objects,
     .show = [](const RunOptions& o) { return std::string(o.attach.objects ? "true" : "false"); }},
    {.key = "probe.rescue",
     .value_name = "HOW",
     .help =
         "the rescue program, which counts at their call sites most checks the kernel skipped the "
         "check's program for: auto (where a run of the check's program can be preempted: 7.x, "
         "PREEMPT_RT; a second program run per check) or off (skipped checks only counted, in "
         "usercopy_checks_missed_total)",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_probe_rescue,
     .show =
         [](const RunOptions& o) { return std::string(name_of(kProbeRescue, o.attach.rescue)); }},
    {.key = "debuginfo.path",
     .value_name = "PATH",
     .help =
         "the kernel's debuginfo, for the copy function and source line behind each call site: a "
         "vmlinux, or a directory searched like /usr/lib/debug; empty: the distributions' places "
         "(/usr/lib/debug/boot/vmlinux-RELEASE, ...); none: without. Used only if its build-id is "
         "the running kernel's",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_debuginfo_path,
     .show = [](const RunOptions& o) { return o.debuginfo_path; }},
    {.key = "debuginfo.debuginfod",
     .value_name = "",
     .help = "when no file matches, ask the debuginfod servers in DEBUGINFOD_URLS for the running "
             "kernel's debuginfo by build-id (downloads hundreds of MB, beside the drains)",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_debuginfo_debuginfod,
     .show =
         [](const RunOptions& o) {
           return std::string(o.debuginfo_debuginfod ? "true" : "false");
         }},
    {.key = "bpf.max-keys",
     .value_name = "N",
     .help = "distinct counter keys (call site, syscall, direction; or stack, syscall) each BPF "
             "map holds "
             "per --interval; 256..1048576",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_max_keys,
     .show = [](const RunOptions& o) { return std::to_string(o.attach.max_keys); }},
    {.key = "bpf.max-stacks",
     .value_name = "N",
     .help =
         "distinct kernel stacks each BPF stack map holds per --interval (~1 KiB each); 64..262144",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Restart,
     .apply = apply_max_stacks,
     .show = [](const RunOptions& o) { return std::to_string(o.attach.max_stacks); }},
    // doctor too: --log.level=debug shows libbpf's reasons behind each verdict.
    {.key = "log.level",
     .value_name = "LEVEL",
     .help = "debug (also libbpf's messages), info, warn or error",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Live,
     .apply = apply_log_level,
     .show = [](const RunOptions& o) { return o.log_level; }},
    {.key = "log.format",
     .value_name = "FORMAT",
     .help =
         "log lines on stderr as text, logfmt (ts=… level=… msg=…) or json (one object per line)",
     .doctor = true,
     .record = true,
     .on_reload = OnReload::Live,
     .apply = apply_log_format,
     .show = [](const RunOptions& o) { return std::string(log_format_name(o.log_format)); }},
    // Not record's: it drops nothing, so that COMMAND runs with the privileges it was given.
    {.key = "capabilities.keep",
     .value_name = "CAPS",
     .help = "capabilities kept after attaching when started with more: a list such as "
             "cap_syslog,cap_bpf, or all, or none (no_new_privs is set in every case)",
     .doctor = false,
     .record = false,
     .on_reload = OnReload::Restart,
     .apply = apply_capabilities_keep,
     .show = [](const RunOptions& o) { return format_capability_keep(o.capabilities_keep); }},
}};

}  // namespace

const char* mode_name(Mode mode) { return name_of(kModes, mode).data(); }

std::span<const Setting> settings() { return kSettings; }

std::optional<std::string> apply_config_entries(const std::vector<ConfigEntry>& entries,
                                                const std::string& name, RunOptions& options) {
  for (const ConfigEntry& entry : entries) {
    const std::string where = name + ":" + std::to_string(entry.line) + ": ";
    const Setting* setting = find_setting(entry.key);
    if (setting == nullptr) return on_one_line(where + "unknown key " + in_quotes(entry.key));
    const std::string key = std::string(setting->key) + ": ";
    switch (entry.kind) {
      case ConfigEntry::Kind::Null:
        return where + key + "missing value";
      case ConfigEntry::Kind::Sequence:
        if (setting->append == nullptr) return where + key + "expected a single value, not a list";
        if (entry.items.empty()) return where + key + "expected a list of plain values";
        for (size_t i = 0; i < entry.items.size(); ++i) {
          const auto apply = i == 0 ? setting->apply : setting->append;
          if (auto error = apply(entry.items[i], options); !error.empty()) {
            return on_one_line(where + key + error);
          }
        }
        break;
      case ConfigEntry::Kind::Scalar:
        if (auto error = setting->apply(entry.value, options); !error.empty()) {
          return on_one_line(where + key + error);
        }
    }
  }
  return std::nullopt;
}

std::vector<SettingChange> changed_settings(const RunOptions& before, const RunOptions& after) {
  std::vector<SettingChange> changes;
  for (const Setting& setting : kSettings) {
    std::string was = setting.show(before), now = setting.show(after);
    if (was != now) changes.push_back({&setting, std::move(was), std::move(now)});
  }
  return changes;
}

const Setting* find_setting(std::string_view key) {
  for (const Setting& setting : kSettings) {
    if (setting.key == key) return &setting;
  }
  return nullptr;
}

}  // namespace hucprof
