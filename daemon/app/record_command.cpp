#include "app/record_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>

#include <spdlog/spdlog.h>

#include "app/child_command.h"
#include "app/command_error.h"
#include "app/kernel_view.h"
#include "app/output_file.h"
#include "app/profiling_pipeline.h"
#include "app/signal_inbox.h"
#include "core/drain/followed_exits.h"
#include "core/files/file_text.h"
#include "core/symbols/stack_profile.h"
#include "core/text/cpu_list.h"
#include "core/text/duration.h"
#include "core/workload/record_target.h"
#include "export/views/pprof_writer.h"
#include "workload/cgroup_index.h"
#include "workload/command_cgroup.h"
#include "workload/followed_tasks.h"
#include "workload/process_exits.h"

namespace hucprof {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kDefaultDuration{30000};
// How often the loop looks at COMMAND or -p's processes (a signalfd cannot tell us they exited).
constexpr std::chrono::milliseconds kExitPoll{100};

std::string joined(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// Waits for COMMAND once the recording is written. A stop signal is passed on to it once (the
// one that ended the recording counts); a command that ignores it is killed at the next, so a
// second Ctrl-C always ends `hucprof record`.
int wait_for(ChildCommand& child, SignalInbox& signals, const std::string& command,
             bool passed_on) {
  spdlog::info("waiting for `{}` to exit{}", command, passed_on ? " (Ctrl-C again kills it)" : "");
  while (true) {
    if (const auto status = child.poll()) return *status;
    const auto received = signals.wait_for(kExitPoll);
    if (!received) continue;
    if (received->action == SignalAction::Ignore) {
      spdlog::warn("received {}: ignored while waiting for `{}`", received->name, command);
    } else if (!passed_on) {
      spdlog::info("received {}: passed on to `{}` (again kills it)", received->name, command);
      child.signal(received->number);
      passed_on = true;
    } else {
      spdlog::warn("received {} again: killing `{}`", received->name, command);
      child.signal(SIGKILL);
      return child.wait();
    }
  }
}

// Removes COMMAND's cgroup, moving out what still runs in it (COMMAND's children that outlived
// it, or COMMAND itself if the recorder ends first): they keep running, unrecorded, as after
// `perf record -- COMMAND`. One line says so.
void release(CommandCgroup& cgroup, const std::string& command, bool exited) {
  const auto released = cgroup.release();
  if (!released.ok()) {
    spdlog::warn("{}", released.error().text);
    return;
  }
  const size_t n = released.value().moved;
  if (n == 0) return;
  const std::string processes = std::to_string(n) + (n == 1 ? " process" : " processes");
  if (exited) {
    spdlog::warn(
        "{} `{}` started outlived it and {} not recorded after it exited: moved to "
        "hucprof's cgroup {}",
        processes, command, n == 1 ? "was" : "were", released.value().to);
  } else {
    spdlog::warn("{} of `{}` still {} and {} not recorded: moved to hucprof's cgroup {}", processes,
                 command, n == 1 ? "runs" : "run", n == 1 ? "is" : "are", released.value().to);
  }
}

// What the flags name (core/workload/record_target.h), checked on this machine: the processes of
// -p, the cgroup of -G, and COMMAND's own cgroup, made before anything is attached (the programs
// are loaded with its id) and before COMMAND starts (it is in it from its first instruction).
struct Followed {
  FollowFilter filter;
  std::string words;  // whose CPU busy CPU is: StackProfile::target
  std::unique_ptr<CommandCgroup> cgroup;
  std::optional<ProcessExits> pids;  // -p's processes, watched: when all have exited, it ends
};

// Every process of -p has exited (said once, with those that exit before the last): the
// recording ends, as `perf record -p`'s does.
bool none_left(ProcessExits& watch, FollowedExits& exits) {
  if (const auto line = exits.note(watch.exited())) spdlog::info("{}", *line);
  return exits.none_left();
}

Result<Followed> follow(const RecordOptions& record) {
  auto online_text = read_file_text("/sys/devices/system/cpu/online");
  auto online = online_text ? parse_cpu_list(*online_text) : std::nullopt;
  if (!online) {
    return Error{"cannot read the online CPU list from /sys/devices/system/cpu/online",
                 kExitCannotRun};
  }
  auto planned = plan_record_target(record.target, *online);
  if (!planned.ok()) return planned.error();
  const RecordTarget& target = planned.value();
  if (target.deprecated_only_command) {
    spdlog::warn("--only-command is deprecated: `record -- COMMAND` follows COMMAND by itself now");
  }
  Followed out;
  if (!target.pids.empty()) {
    auto running = check_processes(target.pids);
    if (!running.ok()) return running.error();
    auto watched = ProcessExits::watch(target.pids);
    if (!watched.ok()) return watched.error();
    out.pids = std::move(watched).value();
  }
  out.filter.tgids = target.pids;
  out.filter.cpus = target.cpus;
  std::string cgroup_path;
  if (target.cgroup || target.follow_command) {
    const Result<std::string> root = find_unified_root();
    if (!root.ok()) {
      return Error{(target.cgroup ? "-G: " : "following COMMAND: ") + root.error().text +
                       (target.cgroup ? "" : " (-a records the whole machine instead)"),
                   kExitCannotRun};
    }
    if (target.cgroup) {
      auto resolved = resolve_cgroup(root.value(), *target.cgroup);
      if (!resolved.ok()) return resolved.error();
      out.filter.cgroup_id = resolved.value().id;
      cgroup_path = resolved.value().path;
    } else {
      auto made = CommandCgroup::make(root.value());
      if (!made.ok()) {
        return Error{
            "following COMMAND: " + made.error().text + " (-a records the whole machine instead)",
            kExitCannotRun};
      }
      out.cgroup = std::move(made).value();
      out.filter.cgroup_id = out.cgroup->id();
    }
  }
  out.words = describe_record_target(target, joined(record.command), cgroup_path);
  spdlog::info("recording {}{}", target.whole_machine() ? "" : "only ", out.words);
  return out;
}

}  // namespace

int record_command(const RunOptions& run, const RecordOptions& record) {
  SignalInbox signals;  // before anything starts: Ctrl-C must end the recording, not the process

  auto opened = OutputFile::open(record.output, OutputContent::Binary);
  if (!opened.ok()) {
    spdlog::error("-o {}: {}", record.output, opened.error().text);
    return opened.error().exit_code;
  }
  OutputFile& output = opened.value();
  if (!record.command.empty()) {
    if (auto runnable = ChildCommand::check_runnable(record.command); !runnable.ok()) {
      return log_and_exit_code(runnable.error());
    }
  }
  auto followed = follow(record);
  if (!followed.ok()) return log_and_exit_code(followed.error());
  std::unique_ptr<CommandCgroup> cgroup = std::move(followed.value().cgroup);
  std::optional<ProcessExits>& pids = followed.value().pids;
  FollowedExits exits(followed.value().filter.tgids);
  RunOptions options = run;
  options.attach.follow = followed.value().filter;
  options.attach.label_pids = true;
  auto loaded = load_kernel_view(run.kallsyms_path);
  if (!loaded.ok()) return log_and_exit_code(loaded.error());
  KernelView& kernel = loaded.value();
  auto started = ProfilingPipeline::start(options, kernel);
  if (!started.ok()) return log_and_exit_code(started.error());
  ProfilingPipeline& pipeline = *started.value();
  // What happened while attaching is not part of the recording: the file is the difference
  // from this drain on (settled: nothing of it may come later, waiting for its lines).
  pipeline.drain(true, true);
  const StackProfile attached = pipeline.profiles().cumulative();

  std::unique_ptr<ChildCommand> child;
  if (!record.command.empty()) {
    auto spawned = ChildCommand::start(record.command, cgroup ? cgroup->procs_fd() : -1);
    if (!spawned.ok()) return log_and_exit_code(spawned.error());
    child = std::move(spawned).value();
  }
  // No --duration: as long as COMMAND runs or -p's processes live (perf record -p has no limit
  // either), else 30 s.
  const bool bounded = record.duration.has_value() || (!child && !pids);
  const std::chrono::milliseconds limit = record.duration.value_or(kDefaultDuration);
  spdlog::info("recording{}{}{}; Ctrl-C stops early",
               bounded ? " for " + format_duration(limit) : "",
               child ? " while `" + joined(record.command) + "` runs" : "",
               pids ? (bounded ? " or " : " ") + exits.until_words() : "");

  const auto begin = Clock::now();
  auto next_drain = begin + run.interval;
  std::optional<int> child_status;
  bool passed_on = false;  // COMMAND was sent the signal that stopped the recording
  while (true) {
    const auto now = Clock::now();
    if (bounded && now - begin >= limit) break;
    auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_drain - now);
    if (bounded) {
      wait = std::min(wait,
                      std::chrono::duration_cast<std::chrono::milliseconds>(limit - (now - begin)));
    }
    if (child || pids) wait = std::min(wait, kExitPoll);
    if (const auto received = signals.wait_for(std::max(wait, std::chrono::milliseconds(0)))) {
      // SIGHUP too: the terminal went away, and the recording so far is worth keeping.
      if (received->action != SignalAction::Ignore) {
        spdlog::info("received {}, stopping the recording", received->name);
        if (child) child->signal(received->number);
        passed_on = child != nullptr;
        break;
      }
      spdlog::warn("received {}: ignored (SIGINT, SIGTERM or SIGHUP stop the recording)",
                   received->name);
    }
    if (child && (child_status = child->poll())) break;
    if (pids && none_left(*pids, exits)) break;  // the drain after the loop takes their last
    if (Clock::now() >= next_drain) {
      pipeline.drain(true);
      next_drain += run.interval;
    }
  }
  pipeline.drain(true, true);
  StackProfile profile = difference(pipeline.profiles().cumulative(), attached);
  profile.target = followed.value().words;
  started.value().reset();  // detach before writing and waiting

  if (auto written = output.commit(encode_pprof_gzip(profile)); !written.ok()) {
    if (cgroup) release(*cgroup, joined(record.command), child_status.has_value());
    return log_and_exit_code(written.error());
  }
  spdlog::info("wrote {}: {} stacks over {:.1f} s; `hucprof report {}` reads it", record.output,
               profile.samples.size(), static_cast<double>(profile.duration_ns) / 1e9,
               record.output);
  if (child) {
    if (!child_status) child_status = wait_for(*child, signals, joined(record.command), passed_on);
    if (*child_status != 0)
      spdlog::warn("`{}` exited with status {}", joined(record.command), *child_status);
  }
  if (cgroup) release(*cgroup, joined(record.command), true);
  return 0;
}

}  // namespace hucprof
