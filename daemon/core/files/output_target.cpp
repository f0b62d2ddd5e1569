#include "core/files/output_target.h"

namespace hucprof {

namespace {

using Kind = OutputFacts::Kind;
using Action = OutputDecision::Action;

// Linux's device numbers (Documentation/admin-guide/devices.txt): 1:3 is /dev/null; 4 the
// virtual consoles and serial ports, 5:0 /dev/tty, 5:1 /dev/console, 136-143 pseudo-terminals.
constexpr uint32_t kMemoryMajor = 1, kNullMinor = 3;

bool is_terminal(uint32_t major, uint32_t minor) {
  return major == 4 || (major == 5 && minor <= 1) || (major >= 136 && major <= 143);
}

OutputDecision refuse(std::string why) { return {Action::Refuse, std::move(why)}; }

std::string device_numbers(const OutputFacts& facts) {
  return std::to_string(facts.device_major) + ":" + std::to_string(facts.device_minor);
}

// Where a refused device sends the user instead.
std::string places_for(OutputContent content) {
  return content == OutputContent::Text
             ? "; text is written only into a file, a pipe, a FIFO, /dev/null or a terminal"
             : "; a profile is written only into a file, a pipe, a FIFO or /dev/null";
}

}  // namespace

OutputDecision decide_output(const OutputFacts& facts, OutputContent content) {
  if (!facts.symlink && facts.entry == Kind::Missing) return {Action::Create, ""};
  if (facts.symlink && facts.target == Kind::Missing) {
    return refuse("is a symbolic link to nothing; give the path it should create");
  }
  const std::string through = facts.symlink ? "leads to " : "is ";
  switch (facts.target) {
    case Kind::Missing:  // only for a link, handled above
    case Kind::Regular:
      return {facts.symlink ? Action::WriteInto : Action::Replace, ""};
    case Kind::Directory:
      return refuse(through + "a directory");
    case Kind::Fifo:
      return {Action::WriteInto, ""};
    case Kind::Socket:
      return refuse(through + "a socket");
    case Kind::BlockDevice:
      return refuse(through + "a block device (" + device_numbers(facts) + ")" +
                    places_for(content));
    case Kind::CharDevice:
      if (facts.device_major == kMemoryMajor && facts.device_minor == kNullMinor) {
        return {Action::WriteInto, ""};
      }
      if (is_terminal(facts.device_major, facts.device_minor)) {
        if (content == OutputContent::Text) return {Action::WriteInto, ""};
        return refuse(through +
                      "a terminal, and the profile is gzipped binary (redirect it: -o "
                      "/dev/stdout > FILE)");
      }
      return refuse(through + "a character device (" + device_numbers(facts) + ")" +
                    places_for(content));
  }
  return refuse("is of an unknown kind");
}

}  // namespace hucprof
