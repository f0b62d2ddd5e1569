#include "app/debuginfo_report.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <sstream>

#include "app/terminal_text.h"
#include "core/symbols/build_id.h"

namespace hucprof {

namespace {

constexpr size_t kModulesNamed = 8;  // doctor names at most this many modules per line

std::string why_none(const DebuginfoReport& r) {
  if (r.off) return "off (--debuginfo.path none)";
  if (!r.build_id_problem.empty()) {
    return r.build_id_problem + ": no file can be proved to be the running kernel's";
  }
  // A file that is there but refused says more than all the absent ones.
  for (const CandidateCheck& c : r.looked) {
    if (c.outcome != CandidateCheck::Absent) return describe(c, r.build_id);
  }
  return r.looked.size() == 1 ? describe(r.looked[0], r.build_id)
                              : "none for build-id " + short_build_id(r.build_id) + " in the " +
                                    std::to_string(r.looked.size()) + " places looked at";
}

std::string names(const std::vector<std::string>& list) {
  std::string out;
  for (size_t i = 0; i < list.size() && i < kModulesNamed; ++i) out += (i ? ", " : "") + list[i];
  if (list.size() > kModulesNamed) out += ", …";
  return out;
}

}  // namespace

DebuginfoSettings debuginfo_settings(const RunOptions& options, const std::string& release) {
  DebuginfoSettings s;
  s.path = options.debuginfo_path;
  s.debuginfod = options.debuginfo_debuginfod;
  s.release = release;
  return s;
}

void log_debuginfo(const DebuginfoReport& r) {
  if (!r.vmlinux.empty()) {
    spdlog::info(
        "debuginfo: {} (build-id {}, the running kernel's): call sites get their copy "
        "functions and source lines",
        r.vmlinux, short_build_id(r.build_id));
    return;
  }
  if (r.debuginfod_pending) {
    spdlog::info("debuginfo: {}; call sites get source lines once it arrives", r.debuginfod);
    return;
  }
  if (r.off) return;  // asked for: nothing to say
  spdlog::info("debuginfo: {}; call sites are named without copy functions and source lines{}{}",
               why_none(r), r.debuginfod.empty() ? "" : "; " + r.debuginfod,
               "; to add them: " + r.install);
}

std::vector<std::string> loaded_modules(const std::string& proc_modules) {
  std::vector<std::string> out;
  std::istringstream in(proc_modules);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    if (words >> name) out.push_back(name);
  }
  return out;
}

void print_debuginfo(KernelDebuginfo& debuginfo, const std::vector<std::string>& modules) {
  const DebuginfoReport& r = debuginfo.report();
  auto row = [](const char* what, const char* ok, const std::string& detail) {
    print_text("  %-22s %-4s %s\n", what, ok, detail.c_str());
  };
  auto more = [](const std::string& detail) {
    print_text("  %-22s %-4s %s\n", "", "", detail.c_str());
  };
  print_text("\nDebuginfo (the copy function and source line behind each call site)\n");
  if (r.off) {
    row("vmlinux", "no", why_none(r));
    return;
  }
  row("build-id", r.build_id.empty() ? "no" : "yes",
      r.build_id.empty() ? r.build_id_problem : r.build_id + " (the running kernel's)");
  if (!r.vmlinux.empty()) {
    row("vmlinux", "yes", r.vmlinux);
  } else {
    row("vmlinux", "no", why_none(r));
  }
  for (const CandidateCheck& c : r.looked) more("looked at " + describe(c, r.build_id));
  if (!r.debuginfod.empty()) {
    more(r.debuginfod);
  } else if (r.vmlinux.empty()) {
    more("debuginfod: not asked (--debuginfo.debuginfod asks the servers in DEBUGINFOD_URLS)");
  }
  if (r.vmlinux.empty()) more("install: " + r.install);

  if (r.vmlinux.empty() || modules.empty()) return;
  std::vector<std::string> with, without;
  std::string problem;
  for (const ModuleDebuginfo& m : debuginfo.check_modules(modules)) {
    if (!m.file.empty()) {
      with.push_back(m.module);
    } else {
      without.push_back(m.module);
      if (problem.empty()) problem = m.module + ": " + m.problem;
    }
  }
  row("modules", with.empty() ? "no" : "yes",
      std::to_string(with.size()) + " of " + std::to_string(modules.size()) +
          " loaded modules have theirs" + (with.empty() ? "" : " (" + names(with) + ")"));
  if (!without.empty())
    more("without: " + names(without) + (problem.empty() ? "" : "; " + problem));
}

}  // namespace hucprof
