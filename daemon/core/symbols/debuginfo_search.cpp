#include "core/symbols/debuginfo_search.h"

#include <algorithm>
#include <sstream>

#include "core/symbols/build_id.h"

namespace hucprof {

namespace {

constexpr std::string_view kDebugDir = "/usr/lib/debug";

std::string joined(std::string_view dir, std::string_view rest) {
  std::string out(dir);
  while (!out.empty() && out.back() == '/') out.pop_back();
  return out + "/" + std::string(rest);
}

// An absolute place of the default search, in the file system `root` ("" the host's).
std::string in_root(std::string_view root, std::string_view place) {
  return root.empty() ? std::string(place) : joined(root, place.substr(1));
}

// The debug directories a --debuginfo.path directory stands for: itself (laid out like
// /usr/lib/debug) and, for an unpacked package, its usr/lib/debug.
std::vector<std::string> debug_roots(const std::string& path, PathKind kind,
                                     std::string_view root) {
  if (kind == PathKind::Directory) return {path, joined(path, "usr/lib/debug")};
  if (path.empty()) return {in_root(root, kDebugDir)};
  return {};
}

// ID and ID_LIKE of an os-release file, as words.
std::vector<std::string> os_ids(std::string_view os_release) {
  std::vector<std::string> ids;
  std::istringstream in{std::string(os_release)};
  std::string line;
  while (std::getline(in, line)) {
    std::string_view l = line;
    for (std::string_view key : {"ID=", "ID_LIKE="}) {
      if (!l.starts_with(key)) continue;
      std::string value(l.substr(key.size()));
      std::erase(value, '"');
      std::erase(value, '\'');
      std::istringstream words(value);
      for (std::string w; words >> w;) ids.push_back(w);
    }
  }
  return ids;
}

// A cursor over a release string for the release grammars below: each step consumes what it
// names and says whether it did, so a grammar reads as a chain of steps.
struct ReleaseCursor {
  std::string_view rest;
  bool digits() {
    size_t n = 0;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    rest.remove_prefix(n);
    return n > 0;
  }
  bool literal(std::string_view l) {
    if (!rest.starts_with(l)) return false;
    rest.remove_prefix(l.size());
    return true;
  }
  // One or more characters of `set` (ranges written as "a-z").
  bool run_of(std::string_view set) {
    auto in_set = [&](char c) {
      for (size_t k = 0; k < set.size(); ++k) {
        if (k + 2 < set.size() && set[k + 1] == '-') {
          if (c >= set[k] && c <= set[k + 2]) return true;
          k += 2;
        } else if (c == set[k]) {
          return true;
        }
      }
      return false;
    };
    size_t n = 0;
    while (n < rest.size() && in_set(rest[n])) ++n;
    rest.remove_prefix(n);
    return n > 0;
  }
  bool strip_suffix(std::string_view l) {
    if (!rest.ends_with(l)) return false;
    rest.remove_suffix(l.size());
    return true;
  }
};

// Debian: <a>.<b>[.<c>][-<abi>|+deb<N>[u<M>]][-cloud|-rt]-<arch> (6.1.0-57-amd64,
// 6.12.117+deb12-cloud-amd64).
bool debian_release(std::string_view release) {
  static constexpr std::string_view kArches[] = {
      "amd64",     "arm64",  "armmp",      "armmp-lpae", "686",       "686-pae", "powerpc64le",
      "ppc64el",   "s390x",  "riscv64",    "loong64",    "rpi",       "marvell", "4kc-malta",
      "5kc-malta", "octeon", "loongson-3", "mips64r2el", "mips32r2el"};
  ReleaseCursor c{release};
  if (!c.digits() || !c.literal(".") || !c.digits()) return false;
  if (c.literal(".") && !c.digits()) return false;
  bool arch = false;
  for (std::string_view a : kArches) {
    if (c.rest.size() > a.size() && c.rest.ends_with(a) &&
        c.rest[c.rest.size() - a.size() - 1] == '-') {
      c.rest.remove_suffix(a.size() + 1);
      arch = true;
      break;
    }
  }
  if (!arch) return false;
  if (!c.strip_suffix("-cloud")) c.strip_suffix("-rt");
  if (c.rest.empty()) return true;
  if (c.literal("-")) return c.digits() && c.rest.empty();
  if (!c.literal("+deb") || !c.digits()) return false;
  if (c.literal("u") && !c.digits()) return false;
  return c.rest.empty();
}

// Ubuntu: <a>.<b>.<c>-<abi>-<flavour> (6.8.0-45-generic).
bool ubuntu_release(std::string_view release) {
  ReleaseCursor c{release};
  return c.digits() && c.literal(".") && c.digits() && c.literal(".") && c.digits() &&
         c.literal("-") && c.digits() && c.literal("-") && c.run_of("a-z") &&
         (c.run_of("a-z0-9-"), c.rest.empty());
}

// Fedora and RHEL: <a>.<b>.<c>-<release>.fc<N>|.el<N>[_<M>].<arch> (6.11.4-301.fc41.x86_64).
bool redhat_release(std::string_view release) {
  ReleaseCursor c{release};
  if (!(c.digits() && c.literal(".") && c.digits() && c.literal(".") && c.digits() &&
        c.literal("-")))
    return false;
  // The package release ([0-9.]+) ends at the last ".fc" or ".el" followed by a digit.
  for (size_t at = c.rest.size(); at-- > 0;) {
    std::string_view tail = c.rest.substr(at);
    if (!tail.starts_with(".fc") && !tail.starts_with(".el")) continue;
    ReleaseCursor head{c.rest.substr(0, at)};
    if (!head.run_of("0-9.") || !head.rest.empty()) continue;
    ReleaseCursor dist{tail.substr(3)};
    if (!dist.digits()) continue;
    if (tail.starts_with(".el") && dist.literal("_") && !dist.digits()) continue;
    if (dist.literal(".") && dist.run_of("a-z0-9_") && dist.rest.empty()) return true;
  }
  return false;
}

// Whether `release` is named the way the distribution names its own kernel packages' releases
// (their debuginfo packages exist for those only).
bool distribution_kernel(const std::vector<std::string>& ids, std::string_view release) {
  auto is = [&](std::string_view id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  if (is("ubuntu")) return ubuntu_release(release);
  if (is("debian")) return debian_release(release);
  return redhat_release(release);
}

}  // namespace

std::vector<std::string> vmlinux_candidates(const std::string& path, PathKind kind,
                                            std::string_view release, std::string_view build_id,
                                            std::string_view root) {
  if (kind == PathKind::File || (kind == PathKind::Missing && !path.empty())) return {path};
  const std::string r(release);
  std::vector<std::string> out;
  for (const std::string& debug : debug_roots(path, kind, root)) {
    out.push_back(joined(debug, "boot/vmlinux-" + r));              // Debian, Ubuntu
    out.push_back(joined(debug, "lib/modules/" + r + "/vmlinux"));  // Fedora, Debian 7.x
    out.push_back(joined(debug, "vmlinux-" + r));                   // Debian 7.x
    if (!build_id.empty()) {
      out.push_back(joined(debug, ".build-id/" + build_id_path(build_id) + ".debug"));
    }
    out.push_back(joined(debug, "boot/vmlinux-" + r + ".debug"));
  }
  if (kind == PathKind::Directory) {
    out.push_back(joined(path, "vmlinux"));
  } else {
    // A kernel built and installed by hand: only useful when built with debuginfo.
    out.push_back(in_root(root, "/boot/vmlinux-" + r));
    out.push_back(in_root(root, "/lib/modules/" + r + "/build/vmlinux"));
  }
  return out;
}

std::vector<std::string> module_debug_dirs(const std::string& path, PathKind kind,
                                           std::string_view release, std::string_view root) {
  std::vector<std::string> out;
  for (const std::string& debug : debug_roots(path, kind, root)) {
    out.push_back(joined(debug, "lib/modules/" + std::string(release)));
  }
  if (kind == PathKind::Directory) out.push_back(path);
  return out;
}

std::vector<std::string> build_id_dirs(const std::string& path, PathKind kind,
                                       std::string_view root) {
  std::vector<std::string> out;
  for (const std::string& debug : debug_roots(path, kind, root)) {
    out.push_back(joined(debug, ".build-id"));
  }
  return out;
}

std::string module_of_file(std::string_view name) {
  for (std::string_view suffix : {".ko.debug", ".ko.xz", ".ko.zst", ".ko.gz", ".ko"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      std::string module(name.substr(0, name.size() - suffix.size()));
      std::replace(module.begin(), module.end(), '-', '_');
      return module;
    }
  }
  return "";
}

CandidateCheck::Outcome judge_build_id(std::string_view file_build_id,
                                       std::string_view running_build_id) {
  if (file_build_id.empty()) return CandidateCheck::NoBuildId;
  return file_build_id == running_build_id ? CandidateCheck::Accepted : CandidateCheck::Mismatch;
}

std::string describe(const CandidateCheck& c, std::string_view running_build_id) {
  switch (c.outcome) {
    case CandidateCheck::Absent:
      return c.path + ": no such file";
    case CandidateCheck::Unreadable:
      return c.path + ": cannot be read: " + c.detail;
    case CandidateCheck::NoDwarf:
      return c.path + ": has no DWARF debuginfo (.debug_info): a stripped image";
    case CandidateCheck::NoBuildId:
      return c.path +
             ": refused: it has no GNU build-id, so it cannot be proved to be this "
             "kernel's";
    case CandidateCheck::Mismatch:
      if (running_build_id.empty()) {
        return c.path +
               ": refused: the running kernel's build-id is unknown, so no file can be "
               "proved to be its";
      }
      return c.path + ": refused: its build-id " + short_build_id(c.build_id) + " is not the " +
             "running kernel's " + short_build_id(running_build_id) +
             " (another build: its lines would be wrong)";
    case CandidateCheck::Accepted:
      return c.path + " (build-id " + short_build_id(c.build_id) + ", the running kernel's)";
  }
  return c.path;
}

std::string install_command(std::string_view os_release, std::string_view release) {
  const std::vector<std::string> ids = os_ids(os_release);
  auto is = [&](std::string_view id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  const std::string r(release);
  const bool known = is("ubuntu") || is("debian") || is("fedora") || is("rhel") || is("centos");
  if (known && !distribution_kernel(ids, release)) {
    // A kernel built elsewhere (by hand, by a vendor) on a distribution's user space: no
    // package of that distribution holds its debuginfo, so naming one would send the user
    // looking for something that cannot exist.
    return "kernel " + r + " is not a package of this distribution, so no debuginfo package " +
           "exists for it: point --debuginfo.path at the vmlinux its build left (built with " +
           "CONFIG_DEBUG_INFO; docs/debuginfo.md)";
  }
  // Ubuntu says ID_LIKE=debian: ask for it first.
  if (is("ubuntu")) {
    return "apt-get install linux-image-" + r +
           "-dbgsym (from ddebs.ubuntu.com, after apt-get install ubuntu-dbgsym-keyring and that "
           "archive in the sources; docs/debuginfo.md)";
  }
  if (is("debian")) return "apt-get install linux-image-" + r + "-dbg";
  if (is("fedora") || is("rhel") || is("centos")) return "dnf debuginfo-install kernel-" + r;
  return "install your distribution's debuginfo package of kernel " + r +
         ", or point --debuginfo.path at a vmlinux built with debuginfo (docs/debuginfo.md)";
}

}  // namespace hucprof
