#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/symbols/debuginfo_search.h"
#include "core/symbols/source_resolver.h"
#include "debuginfo/debug_file.h"

namespace hucprof {

class DebuginfodClient;

struct DebuginfoSettings {
  std::string path;         // --debuginfo.path: "" the distributions' places, "none" off
  bool debuginfod = false;  // --debuginfo.debuginfod: ask DEBUGINFOD_URLS by build-id
  std::string release;      // uname -r
  // The file system the distributions' places are looked for in: "" the host's; a test's fake
  // root. Not applied to `path`.
  std::string root;
  // Where the running kernel says who it is; overridable for tests and containers.
  std::string kernel_notes = "/sys/kernel/notes";
  std::string sys_module = "/sys/module";
  std::string os_release = "/etc/os-release";
};

// What was looked for, where, and what came of it: for doctor and the log.
struct DebuginfoReport {
  bool off = false;                    // --debuginfo.path none
  std::string build_id;                // the running kernel's; "" when unknown
  std::string build_id_problem;        // why it is unknown
  std::vector<CandidateCheck> looked;  // every vmlinux candidate, in order
  std::string vmlinux;                 // the accepted file, "" when none (yet)
  std::string debuginfod;              // what debuginfod did or does; "" when not asked
  bool debuginfod_pending = false;     // a download runs in the background
  std::string install;                 // the command that installs it on this distribution
};

// One loaded module, for doctor.
struct ModuleDebuginfo {
  std::string module;
  std::string build_id;  // the running module's, "" when its notes say none
  std::string file;      // the accepted debuginfo, "" when none
  std::string problem;   // why none
};

// The kernel's debuginfo for the drains: finds vmlinux's (and on demand each module's), uses
// a file only when its GNU build-id is the running kernel's (module's), and answers lookups
// with libdw. With --debuginfo.debuginfod and nothing on disk, the download runs beside the
// drains; lines appear from the drain after it arrives.
class KernelDebuginfo final : public SourceResolver {
 public:
  // Local files are found and checked now (milliseconds: headers and notes only). wait: a
  // debuginfod download happens now, not in the background (doctor).
  static std::unique_ptr<KernelDebuginfo> find(const DebuginfoSettings& settings, bool wait);
  ~KernelDebuginfo() override;
  KernelDebuginfo(const KernelDebuginfo&) = delete;
  KernelDebuginfo& operator=(const KernelDebuginfo&) = delete;

  const DebuginfoReport& report() const { return report_; }

  bool ready() const override { return vmlinux_ != nullptr; }
  SourceLinesPtr lines(const SourceAddress& at) override;
  void end_batch() override;
  bool take_news() override;
  void set_news_listener(std::function<void()> listener) override;
  void start_threads() override;
  void modules_changed() override { modules_.clear(); }

  // Doctor: for each module, what the search finds on disk (no download).
  std::vector<ModuleDebuginfo> check_modules(const std::vector<std::string>& modules);
  size_t parsed_units() const { return vmlinux_ ? vmlinux_->parsed_units() : 0; }
  size_t resident_units() const { return vmlinux_ ? vmlinux_->resident_units() : 0; }

 private:
  explicit KernelDebuginfo(DebuginfoSettings settings);
  struct Module {
    std::unique_ptr<ModuleFile> file;
    bool asked = false;  // searched (and maybe queued for debuginfod)
  };
  struct Download {
    std::string module;  // "" for vmlinux
    std::string build_id;
  };
  struct Arrival {
    std::string module;  // "" for vmlinux
    std::string path;    // the downloaded file in the client's cache
    std::unique_ptr<VmlinuxFile> vmlinux;
    std::unique_ptr<ModuleFile> file;
    std::string what;  // for the report
  };

  void find_vmlinux(bool wait);
  ModuleDebuginfo find_module(const std::string& module, std::unique_ptr<ModuleFile>* out);
  const std::map<std::string, std::vector<std::string>>& module_files();
  Arrival download(const Download& job);
  void start_worker();
  void work();

  DebuginfoSettings settings_;
  PathKind kind_ = PathKind::Missing;
  DebuginfoReport report_;
  std::unique_ptr<VmlinuxFile> vmlinux_;
  std::map<std::string, Module> modules_;
  bool module_files_read_ = false;
  std::map<std::string, std::vector<std::string>> module_files_;  // module name → candidate files

  // debuginfod: one client, one worker thread, a queue of build-ids.
  std::unique_ptr<DebuginfodClient> client_;
  std::string client_problem_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Download> queue_;
  std::vector<Arrival> arrivals_;
  std::function<void()> news_listener_;  // told of every arrival
  bool threads_allowed_ = false;         // start_threads() came: the worker may run
  bool stopping_ = false;
};

}  // namespace hucprof
