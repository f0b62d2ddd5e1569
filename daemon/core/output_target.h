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
    WriteInto,  // a pipe, FIFO, /dev/null, or a regular file behind a symbolic link (what
                // `-o /dev/stdout` means): opened and written, never replaced
    Refuse,
  };
  Action action = Action::Refuse;
  std::string why;  // for Refuse: in words, e.g. "is a block device"
};

// A symbolic link is followed, never replaced. Devices other than /dev/null are refused
// without being opened: opening one can act (a watchdog arms, a tape rewinds) and writing a
// profile into a disk destroys it. A terminal is refused as gzip refuses one: the profile is
// binary.
OutputDecision decide_output(const OutputFacts& facts);

}  // namespace hucprof
