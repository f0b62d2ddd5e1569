#include "app/child_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

extern char** environ;

namespace hucprof {

namespace {

// fork, move into the cgroup, exec: posix_spawn has no way into a cgroup before exec here
// (glibc 2.36 lacks posix_spawnattr_setcgroup_np). The child only makes async-signal-safe calls;
// exec's errno comes back through a close-on-exec pipe, so a failed exec reads as posix_spawnp's.
int spawn_in_cgroup(pid_t* pid, char* const argv[], int procs_fd) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return err;
  }
  if (child == 0) {
    int err = 0;
    if (::write(procs_fd, "0", 1) != 1) {  // "0": the writing process itself
      err = errno;
    } else {
      sigset_t none;
      sigemptyset(&none);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int s = 1; s < NSIG; ++s) ::sigaction(s, &dfl, nullptr);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execvp(argv[0], argv);
      err = errno;
    }
    [[maybe_unused]] ssize_t n = ::write(report[1], &err, sizeof(err));
    ::_exit(127);
  }
  ::close(report[1]);
  int err = 0;
  ssize_t n;
  while ((n = ::read(report[0], &err, sizeof(err))) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == sizeof(err)) {
    ::waitpid(child, nullptr, 0);
    return err;
  }
  *pid = child;
  return 0;
}

int shell_status(int raw) {
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return 1;
}

}  // namespace

Result<void> ChildCommand::check_runnable(const std::vector<std::string>& argv) {
  if (argv.empty()) return Error{"no command given"};
  const std::string& name = argv[0];
  auto runnable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (runnable(name)) return {};
    struct stat st {};
    const int err = ::stat(name.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? EISDIR : EACCES;
    return Error{"cannot run " + name + ": " + std::strerror(err)};
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    if (runnable((dir.empty() ? std::string(".") : std::string(dir)) + "/" + name)) return {};
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return Error{"cannot run " + name + ": " + std::strerror(ENOENT)};
}

Result<std::unique_ptr<ChildCommand>> ChildCommand::start(const std::vector<std::string>& argv,
                                                          int cgroup_procs_fd) {
  if (argv.empty()) return Error{"no command given"};
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (cgroup_procs_fd >= 0) {
    pid_t pid = -1;
    if (const int err = spawn_in_cgroup(&pid, args.data(), cgroup_procs_fd); err != 0) {
      return Error{"cannot run " + argv[0] + " in its cgroup: " + std::strerror(err)};
    }
    return std::unique_ptr<ChildCommand>(new ChildCommand(pid));
  }

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Nothing blocked and every disposition at its default: the recorder blocks the signals its
  // SignalInbox reads, and ignores SIGPIPE, which exec would otherwise pass on.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigfillset(&defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int err = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (err != 0) return Error{"cannot run " + argv[0] + ": " + std::strerror(err)};
  return std::unique_ptr<ChildCommand>(new ChildCommand(pid));
}

ChildCommand::~ChildCommand() {
  if (pid_ > 0 && !status_) poll();
}

std::optional<int> ChildCommand::poll() {
  if (status_ || pid_ <= 0) return status_;
  int raw = 0;
  const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
  if (r == pid_) status_ = shell_status(raw);
  return status_;
}

int ChildCommand::wait() {
  while (!status_ && pid_ > 0) {
    int raw = 0;
    const pid_t r = ::waitpid(pid_, &raw, 0);
    if (r == pid_) {
      status_ = shell_status(raw);
    } else if (r < 0 && errno != EINTR) {
      status_ = 1;
    }
  }
  return status_.value_or(1);
}

void ChildCommand::signal(int signo) {
  if (pid_ > 0 && !status_) ::kill(pid_, signo);
}

}  // namespace hucprof
