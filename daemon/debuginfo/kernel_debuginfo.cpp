#include "debuginfo/kernel_debuginfo.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <set>
#include <system_error>

#include "core/files/file_text.h"
#include "core/symbols/build_id.h"
#include "debuginfo/debuginfod_client.h"

namespace hucprof {

namespace {

namespace fs = std::filesystem;

// A directory handed to --debuginfo.path could be "/": the walk for module files stops here.
constexpr size_t kMaxWalkedEntries = 200000;

PathKind kind_of(const std::string& path) {
  std::error_code ec;
  if (path.empty()) return PathKind::Missing;
  if (fs::is_directory(path, ec)) return PathKind::Directory;
  if (fs::exists(path, ec)) return PathKind::File;
  return PathKind::Missing;
}

// Absent: nothing there. A link loop or a directory that may not be searched is a reason to
// name, not an absence.
bool absent(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

template <typename File>
CandidateCheck check(const std::string& path, const std::string& running,
                     std::unique_ptr<File>* accepted) {
  CandidateCheck c;
  c.path = path;
  if (absent(path)) return c;
  auto opened = File::open(path);
  if (!opened.ok()) {
    c.outcome = CandidateCheck::Unreadable;
    c.detail = opened.error().text;
    return c;
  }
  std::unique_ptr<File>& file = opened.value();
  c.build_id = file->facts().build_id;
  if (!file->facts().has_dwarf) {
    c.outcome = CandidateCheck::NoDwarf;
    return c;
  }
  c.outcome = judge_build_id(c.build_id, running);
  if (c.outcome == CandidateCheck::Accepted && accepted) *accepted = std::move(file);
  return c;
}

std::string running_module_build_id(const std::string& sys_module, const std::string& module) {
  const auto notes = read_file_text(sys_module + "/" + module + "/notes/.note.gnu.build-id");
  if (!notes) return "";
  return gnu_build_id(*notes).value_or("");
}

}  // namespace

KernelDebuginfo::KernelDebuginfo(DebuginfoSettings settings) : settings_(std::move(settings)) {}

KernelDebuginfo::~KernelDebuginfo() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (client_) client_->cancel();
  if (worker_.joinable()) worker_.join();
}

std::unique_ptr<KernelDebuginfo> KernelDebuginfo::find(const DebuginfoSettings& settings,
                                                       bool wait) {
  std::unique_ptr<KernelDebuginfo> self(new KernelDebuginfo(settings));
  DebuginfoReport& r = self->report_;
  r.install = install_command(read_file_text(settings.os_release).value_or(""), settings.release);
  if (settings.path == kDebuginfoOff) {
    r.off = true;
    return self;
  }
  if (const auto notes = read_file_text(settings.kernel_notes); !notes) {
    r.build_id_problem = "cannot read " + settings.kernel_notes;
  } else if (const auto id = gnu_build_id(*notes)) {
    r.build_id = *id;
  } else {
    r.build_id_problem = "no GNU build-id note in " + settings.kernel_notes;
  }
  self->kind_ = kind_of(settings.path);
  self->find_vmlinux(wait);
  return self;
}

void KernelDebuginfo::find_vmlinux(bool wait) {
  DebuginfoReport& r = report_;
  for (const std::string& path :
       vmlinux_candidates(settings_.path, kind_, settings_.release, r.build_id, settings_.root)) {
    if (!r.vmlinux.empty()) break;
    r.looked.push_back(check(path, r.build_id, r.build_id.empty() ? nullptr : &vmlinux_));
    if (vmlinux_) r.vmlinux = path;
  }
  if (vmlinux_ || !settings_.debuginfod) return;
  if (r.build_id.empty()) {
    r.debuginfod = "not asked: the running kernel's build-id is unknown";
    return;
  }
  auto client = DebuginfodClient::open();
  if (!client.ok()) {
    r.debuginfod = client.error().text;
    client_problem_ = client.error().text;
    return;
  }
  client_ = std::move(client).value();
  const Download job{"", r.build_id};
  if (wait) {
    Arrival got = download(job);
    r.debuginfod = got.what;
    if (got.vmlinux) {
      vmlinux_ = std::move(got.vmlinux);
      r.vmlinux = got.path;
    }
    return;
  }
  r.debuginfod = "asking " + client_->urls() + " for build-id " + short_build_id(r.build_id) +
                 " in the background";
  r.debuginfod_pending = true;
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(job);
  }
  start_worker();
}

KernelDebuginfo::Arrival KernelDebuginfo::download(const Download& job) {
  Arrival out;
  out.module = job.module;
  const std::string what = job.module.empty() ? "vmlinux" : "module " + job.module;
  auto fetched = client_->fetch(job.build_id);
  if (!fetched.ok()) {
    out.what = "debuginfod: " + what + ": " + fetched.error().text;
    return out;
  }
  out.path = fetched.value();
  const CandidateCheck c = job.module.empty() ? check(out.path, job.build_id, &out.vmlinux)
                                              : check(out.path, job.build_id, &out.file);
  out.what = "debuginfod: " + what + ": fetched " + describe(c, job.build_id);
  return out;
}

void KernelDebuginfo::start_threads() {
  {
    std::lock_guard lock(mutex_);
    threads_allowed_ = true;
  }
  start_worker();
}

void KernelDebuginfo::start_worker() {
  {
    std::lock_guard lock(mutex_);
    if (!threads_allowed_ || queue_.empty()) return;
  }
  if (worker_.joinable()) return;
  worker_ = std::thread([this] { work(); });
}

void KernelDebuginfo::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const Download job = queue_.front();
    queue_.pop_front();
    lock.unlock();
    Arrival got = download(job);
    // Logged here: the download may finish long after start-up, between drains. Cancelled, it
    // is hucprof stopping: nothing to say.
    if (client_->cancelled()) return;
    if (got.vmlinux || got.file) {
      spdlog::info("{}", got.what);
    } else {
      spdlog::warn("{}", got.what);
    }
    lock.lock();
    arrivals_.push_back(std::move(got));
    if (news_listener_) news_listener_();
  }
}

void KernelDebuginfo::set_news_listener(std::function<void()> listener) {
  std::lock_guard lock(mutex_);
  news_listener_ = std::move(listener);
}

bool KernelDebuginfo::take_news() {
  std::vector<Arrival> arrived;
  {
    std::lock_guard lock(mutex_);
    arrived.swap(arrivals_);
  }
  bool news = false;
  for (Arrival& a : arrived) {
    if (a.module.empty()) {
      report_.debuginfod = a.what;
      report_.debuginfod_pending = false;
    }
    if (a.vmlinux) {
      vmlinux_ = std::move(a.vmlinux);
      report_.vmlinux = a.path;
      news = true;
    }
    if (a.file) {
      modules_[a.module].file = std::move(a.file);
      news = true;
    }
  }
  return news;
}

const std::map<std::string, std::vector<std::string>>& KernelDebuginfo::module_files() {
  if (module_files_read_) return module_files_;
  module_files_read_ = true;
  std::set<std::string> seen;
  size_t walked = 0;
  for (const std::string& dir :
       module_debug_dirs(settings_.path, kind_, settings_.release, settings_.root)) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(
             dir, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator() && walked < kMaxWalkedEntries;
         it.increment(ec), ++walked) {
      if (!it->is_regular_file(ec)) continue;
      const std::string module = module_of_file(it->path().filename().string());
      if (module.empty()) continue;
      const std::string path = it->path().string();
      if (seen.insert(path).second) module_files_[module].push_back(path);
    }
  }
  return module_files_;
}

ModuleDebuginfo KernelDebuginfo::find_module(const std::string& module,
                                             std::unique_ptr<ModuleFile>* out) {
  ModuleDebuginfo info;
  info.module = module;
  info.build_id = running_module_build_id(settings_.sys_module, module);
  if (info.build_id.empty()) {
    info.problem = "no GNU build-id in " + settings_.sys_module + "/" + module + "/notes";
    return info;
  }
  std::vector<std::string> candidates;
  for (const std::string& dir : build_id_dirs(settings_.path, kind_, settings_.root)) {
    candidates.push_back(dir + "/" + build_id_path(info.build_id) + ".debug");
  }
  if (auto files = module_files().find(module); files != module_files().end()) {
    candidates.insert(candidates.end(), files->second.begin(), files->second.end());
  }
  std::string last;
  for (const std::string& path : candidates) {
    CandidateCheck c = check(path, info.build_id, out);
    if (c.outcome == CandidateCheck::Accepted) {
      info.file = path;
      return info;
    }
    if (c.outcome != CandidateCheck::Absent) last = describe(c, info.build_id);
  }
  info.problem = last.empty() ? "no debuginfo file for it" : last;
  return info;
}

SourceLinesPtr KernelDebuginfo::lines(const SourceAddress& at) {
  if (!vmlinux_) return nullptr;
  if (at.module.empty()) return vmlinux_->lines(at.text_offset);
  Module& m = modules_[at.module];
  if (!m.asked) {
    m.asked = true;
    const ModuleDebuginfo found = find_module(at.module, &m.file);
    if (!m.file && client_ && !found.build_id.empty()) {
      {
        std::lock_guard lock(mutex_);
        queue_.push_back({at.module, found.build_id});
      }
      start_worker();
      wake_.notify_all();
    }
  }
  return m.file ? m.file->lines(at.symbol, at.offset) : nullptr;
}

void KernelDebuginfo::end_batch() {
  if (vmlinux_) vmlinux_->end_batch();
}

std::vector<ModuleDebuginfo> KernelDebuginfo::check_modules(
    const std::vector<std::string>& modules) {
  std::vector<ModuleDebuginfo> out;
  for (const std::string& m : modules) out.push_back(find_module(m, nullptr));
  return out;
}

}  // namespace hucprof
