#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace hucprof {

// Where the kernel's debuginfo may be, and what was made of each file: the decisions, from
// facts the edge (daemon/debuginfo) gathers. A file is used only when its GNU build-id equals
// the running kernel's (or module's): a vmlinux of another build gives wrong lines.

// --debuginfo.path as given: "" searches the distributions' places, "none" turns it off.
inline constexpr std::string_view kDebuginfoOff = "none";

enum class PathKind { Missing, File, Directory };

// Debian's linux-image-R-dbg and Ubuntu's linux-image-unsigned-R-dbgsym (which Ubuntu's
// linux-image-R-dbgsym pulls in) install vmlinux as /usr/lib/debug/boot/vmlinux-R, Fedora's
// kernel-debuginfo as /usr/lib/debug/lib/modules/R/vmlinux (and a /usr/lib/debug/.build-id/
// link), Debian's 7.x linux-image-R-dbg in both and as /usr/lib/debug/vmlinux-R; self-built
// kernels leave one in /boot or the build tree. `path` (--debuginfo.path)
// replaces the search: a file is the only candidate, a directory is searched like
// /usr/lib/debug (itself, or as a root holding usr/lib/debug). `root` is the file system the
// default search looks in ("" the host's; a test's fake root): it does not apply to `path`.
std::vector<std::string> vmlinux_candidates(const std::string& path, PathKind kind,
                                            std::string_view release, std::string_view build_id,
                                            std::string_view root = {});

// Directories holding modules' debuginfo (walked for M.ko, M.ko.debug, ...), most specific
// first: /usr/lib/debug/lib/modules/R by default.
std::vector<std::string> module_debug_dirs(const std::string& path, PathKind kind,
                                           std::string_view release, std::string_view root = {});
// .build-id directories: a module's debuginfo at <dir>/ab/cdef....debug.
std::vector<std::string> build_id_dirs(const std::string& path, PathKind kind,
                                       std::string_view root = {});

// The module a debuginfo file name is for ("af-packet.ko.debug" → "af_packet"; the kernel's
// module names have '_' where file names may have '-'), "" when it names no module.
std::string module_of_file(std::string_view file_name);

// What one candidate file turned out to be.
struct CandidateCheck {
  enum Outcome {
    Absent,      // no such file
    Unreadable,  // could not be opened or is not ELF (detail says why)
    NoDwarf,     // ELF without .debug_info (a stripped image)
    NoBuildId,   // no GNU build-id note: cannot be proved to be the right one
    Mismatch,    // another build's
    Accepted,
  };
  std::string path;
  Outcome outcome = Absent;
  std::string build_id;  // the file's, when it has one
  std::string detail;
};

// Accepted or Mismatch, from the file's build-id and the running kernel's (or module's).
CandidateCheck::Outcome judge_build_id(std::string_view file_build_id,
                                       std::string_view running_build_id);

// One line about a candidate, for doctor and the log ("/usr/lib/debug/boot/vmlinux-6.1.0-57:
// refused: build-id 0123456789ab is not the running kernel's 6a2b4ac77585").
std::string describe(const CandidateCheck& check, std::string_view running_build_id);

// The one command that installs the running kernel's debuginfo on this distribution, from
// /etc/os-release (ID, ID_LIKE); advice in words where the distribution is not known.
std::string install_command(std::string_view os_release, std::string_view release);

}  // namespace hucprof
