#pragma once
#include <cstdint>
#include <string>

namespace hucprof {

// What is at an output path (`record -o`, `report --flamegraph`) before anything is written:
// the entry itself (lstat) and, through a symbolic link, what it leads to (stat).
struct OutputFacts {
  enum class Kind { Missing, Regular, Directory, Fifo, Socket, CharDevice, BlockDevice };
  Kind entry = Kind::Missing;  // the path itself; a symbolic link is `symlink`, not this
  bool symlink = false;
  Kind target = Kind::Missing;  // what it is, links followed (Missing for a dangling link)
  uint32_t device_major = 0, device_minor = 0;  // of a device target
};

// How an output is written, decided from the facts alone so every case is unit-tested.
struct OutputDecision {
  enum class Action {
    Create,     // nothing there: a temporary file beside it, renamed into place (never over
                // something that appeared meanwhile)
    Replace,    // a regular file: the same, so a reader never sees half a profile
    WriteInto,  // a pipe, FIFO, /dev/null, a terminal for text, or a regular file behind a
                // symbolic link (what `-o /dev/stdout` means): opened and written, never replaced
    Refuse,
  };
  Action action = Action::Refuse;
  std::string why;  // for Refuse: in words, e.g. "is a block device"
};

// What is written, which decides whether a terminal may take it.
enum class OutputContent {
  Binary,  // a gzipped profile (`record -o`): a terminal is refused, as gzip refuses one
  Text,    // a flame graph's SVG (`report --flamegraph`): printable, a terminal shows it
};

// A symbolic link is followed, never replaced. Devices other than /dev/null (and a terminal,
// for text) are refused without being opened: opening one can act (a watchdog arms, a tape
// rewinds) and writing into a disk destroys it.
OutputDecision decide_output(const OutputFacts& facts, OutputContent content);

}  // namespace hucprof
