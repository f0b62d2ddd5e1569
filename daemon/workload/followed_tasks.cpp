#include "workload/followed_tasks.h"

#include <sys/stat.h>

#include <filesystem>
#include <optional>

#include "core/base/quoted_value.h"
#include "core/files/file_text.h"

namespace hucprof {

namespace {

// systemd nests units a few slices deep (user.slice/user-1000.slice/user@1000.service/app.slice);
// deeper trees are a tenant's own, searched by path, not by unit name.
constexpr int kMaxUnitDepth = 6;

std::optional<long> status_tgid(const std::string& status) {
  const size_t at = status.find("\nTgid:");
  if (at == std::string::npos) return std::nullopt;
  try {
    return std::stol(status.substr(at + 6));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

Result<std::vector<int>> check_processes(const std::vector<int>& pids, const std::string& proc) {
  for (int pid : pids) {
    const auto status = read_file_text(proc + "/" + std::to_string(pid) + "/status");
    if (!status) return Error{"-p " + std::to_string(pid) + ": no process runs with that id"};
    const auto tgid = status_tgid(*status);
    if (tgid && *tgid != pid) {
      return Error{"-p " + std::to_string(pid) + ": a thread of process " + std::to_string(*tgid) +
                   " (-p takes the ids of processes)"};
    }
  }
  return pids;
}

Result<ResolvedCgroup> resolve_cgroup(const std::string& root, const CgroupName& name) {
  namespace fs = std::filesystem;
  ResolvedCgroup out;
  if (name.absolute) {
    if (name.path != root && !name.path.starts_with(root + "/")) {
      return Error{"-G " + quoted_value(name.path) + ": not below the unified cgroup root " + root};
    }
    out.path = name.path == root ? "/" : name.path.substr(root.size());
  } else if (name.unit.empty()) {
    out.path = name.path;
  } else {
    std::vector<std::string> found;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it.depth() >= kMaxUnitDepth) it.disable_recursion_pending();
      if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
      if (it->path().filename() == name.unit) {
        found.push_back("/" + fs::relative(it->path(), root, ec).string());
        it.disable_recursion_pending();
      }
    }
    if (found.empty()) {
      return Error{"-G " + quoted_value(name.unit) + ": no cgroup of that unit below " + root +
                   " (is it running? a cgroup path works too)"};
    }
    if (found.size() > 1) {
      return Error{"-G " + quoted_value(name.unit) + ": " + std::to_string(found.size()) +
                   " cgroups of that name (" + found[0] + ", " + found[1] +
                   "): give its path instead"};
    }
    out.path = found[0];
  }
  const std::string dir = root + (out.path == "/" ? "" : out.path);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Error{"-G " + quoted_value(name.unit.empty() ? name.path : name.unit) + ": no cgroup " +
                 dir};
  }
  out.id = st.st_ino;
  return out;
}

}  // namespace hucprof
