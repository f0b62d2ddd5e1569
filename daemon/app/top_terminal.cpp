#include "app/top_terminal.h"

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace hucprof {
namespace {

// xterm's alternate screen (1049: saved and restored with the cursor) and cursor visibility;
// every terminal emulator in use and tmux and screen take them.
constexpr std::string_view kEnter = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J";
constexpr std::string_view kLeave = "\x1b[?25h\x1b[?1049l";

// What the handlers of fatal signals restore: plain data, set before they can run.
volatile sig_atomic_t g_entered = 0;
volatile sig_atomic_t g_have_termios = 0;
termios g_before{};

// write(2) until done: async-signal-safe, and a terminal that went away only ends the writing.
void write_to_terminal(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Async-signal-safe (write, tcsetattr): called from the fatal signals' handler too.
void restore_terminal() {
  if (g_entered == 0) return;
  g_entered = 0;
  write_to_terminal(kLeave);
  if (g_have_termios != 0) tcsetattr(STDIN_FILENO, TCSANOW, &g_before);
}

void restore_and_die(int number) {
  restore_terminal();
  std::signal(number, SIG_DFL);
  raise(number);  // delivered once this handler returns, with the default action (a core)
}

// Once per process: the signals that end it with a core, and exit() (which runs no destructor).
void install_last_resorts() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  struct sigaction action {};
  action.sa_handler = restore_and_die;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  for (const int number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) {
    sigaction(number, &action, nullptr);
  }
  std::atexit(restore_terminal);
}

}  // namespace

TopEvents::TopEvents(bool keys, bool screen) : keys_(keys) {
  sigset_t mask;
  sigemptyset(&mask);
  for (const int number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&mask, number);
  if (screen) {
    for (const int number : {SIGWINCH, SIGTSTP, SIGCONT}) sigaddset(&mask, number);
  }
  pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  signals_ = UniqueFd(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
}

std::optional<TopEvent> TopEvents::wait_for(std::chrono::milliseconds timeout) {
  std::array<pollfd, 2> fds{{{signals_.get(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}}};
  const nfds_t count = keys_ ? 2 : 1;
  const int ready =
      poll(fds.data(), count, static_cast<int>(std::max<int64_t>(0, timeout.count())));
  if (ready <= 0) return std::nullopt;
  if ((fds[0].revents & POLLIN) != 0) {
    signalfd_siginfo info{};
    if (read(signals_.get(), &info, sizeof(info)) == sizeof(info)) {
      switch (static_cast<int>(info.ssi_signo)) {
        case SIGWINCH:
        case SIGCONT:
          return TopEvent::Redraw;
        case SIGTSTP:
          return TopEvent::Suspend;
        default:
          return TopEvent::Quit;
      }
    }
  }
  if (keys_ && fds[1].revents != 0) {
    char typed[64];
    const ssize_t n = read(STDIN_FILENO, typed, sizeof(typed));
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
      keys_ = false;  // stdin ended: no more keys, and no busy loop on its end
      return std::nullopt;
    }
    for (ssize_t i = 0; i < n; ++i) {
      const char key = typed[i];
      if (key == '\x1b') break;  // an escape sequence (arrows, function keys): not a key of ours
      if (key == 'q' || key == 'Q') return TopEvent::Quit;
      if (key == 'c' || key == 'C' || key == 'S') return TopEvent::Toggle;
    }
  }
  return std::nullopt;
}

bool TopTerminal::available() {
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) == 1 && term != nullptr && *term != '\0' &&
         std::string_view(term) != "dumb";
}

bool TopTerminal::keys_available() { return isatty(STDIN_FILENO) == 1; }

TopTerminal::TopTerminal() {
  install_last_resorts();
  enter();
}

TopTerminal::~TopTerminal() { leave(); }

void TopTerminal::leave() { restore_terminal(); }

void TopTerminal::enter() {
  if (g_entered != 0) return;
  if (keys_available() && tcgetattr(STDIN_FILENO, &g_before) == 0) {
    g_have_termios = 1;
    termios raw = g_before;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  }
  g_entered = 1;
  write_to_terminal(kEnter);
}

TopTerminal::Size TopTerminal::size() const {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    return {ws.ws_col, ws.ws_row};
  }
  return {};
}

void TopTerminal::draw(const TopScreen& screen, size_t width) {
  // Home, each line over the last one's, the rest of each line and of the screen cleared: no
  // flicker, and nothing left from a wider or longer screen.
  std::string out = "\x1b[H";
  for (size_t i = 0; i < screen.lines.size(); ++i) {
    const std::string& line = screen.lines[i];
    if (screen.header == i) {
      const size_t used = terminal_columns(line);
      out += "\x1b[7m" + line + std::string(width > used ? width - used : 0, ' ') + "\x1b[m";
    } else {
      out += line + "\x1b[K";
    }
    if (i + 1 < screen.lines.size()) out += "\r\n";
  }
  out += "\x1b[J";
  write_to_terminal(out);
}

}  // namespace hucprof
