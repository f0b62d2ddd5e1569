#pragma once
#include <chrono>
#include <cstddef>
#include <optional>

#include "core/base/unique_fd.h"
#include "export/views/top_table.h"

namespace hucprof {

// What ends, changes or redraws `hucprof top`'s screen.
enum class TopEvent {
  Quit,     // q, Ctrl-C (SIGINT), SIGTERM, SIGHUP (the terminal went away), SIGQUIT
  Toggle,   // c (or S, as in top): since start / the last interval
  Redraw,   // SIGWINCH (the window changed size), SIGCONT (back from Ctrl-Z)
  Suspend,  // SIGTSTP (Ctrl-Z): the terminal is given back before the process stops
};

// The signals top answers, from a signalfd, and the keys typed on stdin (when it is a
// terminal), so the loop sleeps until the next refresh or one of them. Blocks the signals for
// the whole process: construct it before any thread starts (they inherit the mask). SIGPIPE is
// ignored: a write to a closed pipe fails with EPIPE where it happens.
class TopEvents {
 public:
  // keys: read stdin (a terminal in raw mode); screen: also SIGWINCH, SIGTSTP and SIGCONT.
  TopEvents(bool keys, bool screen);
  std::optional<TopEvent> wait_for(std::chrono::milliseconds timeout);

 private:
  UniqueFd signals_;
  bool keys_;
};

// The terminal on stdout while top draws on it: the alternate screen, the cursor hidden, stdin
// without echo or line editing (its signal keys kept: Ctrl-C, Ctrl-Z, Ctrl-\ still signal).
// Everything is put back by the destructor, by leave() (Ctrl-Z), and by a handler of the
// signals that end a process with a core (SIGSEGV, SIGABRT, ...) before it dies: no exit path
// leaves the terminal without echo or on the alternate screen. SIGKILL cannot be answered:
// `reset` or `stty sane` mends the terminal then.
class TopTerminal {
 public:
  // Whether stdout is a terminal that takes the sequences used (TERM set and not "dumb").
  static bool available();
  // Whether stdin is a terminal too (keys can be read).
  static bool keys_available();

  TopTerminal();
  ~TopTerminal();
  TopTerminal(const TopTerminal&) = delete;
  TopTerminal& operator=(const TopTerminal&) = delete;

  void leave();
  void enter();

  struct Size {
    size_t width = 80, height = 24;
  };
  Size size() const;
  void draw(const TopScreen& screen, size_t width);
};

}  // namespace hucprof
