// What the kernel's debuginfo costs the daemon: start-up, the first drain (where every address
// is new), steady drains and RSS, with a real debug vmlinux (Debian's 633 MB for 6.1) against
// the same drains without it. Three configurations, each in a fresh child process (clean RSS),
// alternating, several rounds:
//   without        no debuginfo
//   in the drain   every new address looked up in the drain that first sees it
//   background     as the daemon does it: looked up beside the drains, what needs the lines
//                  held until they are in ("lines ms": from the first drain's start until the
//                  drain that put out the last of them)
// The output digest sums up everything the drains put out (stacks with their lines and labels,
// copy shares): the two debuginfo configurations must agree.
//
//   hucprof_debuginfo_bench VMLINUX [--stacks N] [--drains D] [--rounds R]
//
// The kernel is the vmlinux itself, unrelocated: kallsyms is made from its symbol table, its
// notes are the "running" kernel's, so the build-id check passes as on the machine it belongs
// to. Each drain holds N sampled stacks (leaf in __virt_addr_valid, then __check_object_size, a
// call site function picked at random over the whole kernel, three parents, the syscall entry):
// N distinct call sites across many compilation units, more than a real workload touches, so the
// first drain shows the worst of it. Drains run through the daemon's own IntervalBuilder. CPU
// times are the drain thread's (the machine may be loaded; wall times then stretch).
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <malloc.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/drain/interval_builder.h"
#include "core/symbols/callsite_folder.h"
#include "core/symbols/source_symbolizer.h"
#include "debuginfo/kernel_debuginfo.h"
#include "sample_keys.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace hucprof;

struct Symbol {
  uint64_t address, size;
  std::string name;
};

struct Kernel {
  std::vector<Symbol> functions;  // by address
  std::string notes;              // the .notes section
};

Kernel read_kernel(const std::string& path) {
  Kernel k;
  elf_version(EV_CURRENT);
  const int fd = open(path.c_str(), O_RDONLY);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  size_t names = 0;
  elf_getshdrstrndx(elf, &names);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    const char* name = elf_strptr(elf, names, shdr.sh_name);
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (name && std::strcmp(name, ".notes") == 0 && data) {
      k.notes.assign(static_cast<const char*>(data->d_buf), data->d_size);
    }
    if (shdr.sh_type != SHT_SYMTAB || !data) continue;
    for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      const char* s = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (s && *s && (GELF_ST_TYPE(sym.st_info) == STT_FUNC || std::strcmp(s, "_stext") == 0)) {
        k.functions.push_back({sym.st_value, sym.st_size, s});
      }
    }
  }
  elf_end(elf);
  close(fd);
  std::sort(k.functions.begin(), k.functions.end(),
            [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return k;
}

std::string kallsyms_text(const Kernel& k) {
  std::ostringstream out;
  out << std::hex;
  for (const Symbol& s : k.functions) out << s.address << " T " << s.name << "\n";
  return out.str();
}

uint64_t inside(const Kernel& k, const std::string& name, std::mt19937_64& rng) {
  for (const Symbol& s : k.functions) {
    if (s.name == name) return s.address + 1 + rng() % std::max<uint64_t>(s.size - 1, 1);
  }
  return 0;
}

// N sampled stacks, the same every drain (steady state), leaf first.
RawDrain make_drain(const Kernel& k, size_t n, uint64_t round) {
  std::mt19937_64 rng(42);
  std::vector<const Symbol*> big;
  for (const Symbol& s : k.functions) {
    if (s.size >= 64 && s.address >= 0xffffffff81000000ull) big.push_back(&s);
  }
  RawDrain d;
  d.sampling = true;
  const uint64_t leaf = inside(k, "__virt_addr_valid", rng);
  const uint64_t check = inside(k, "__check_object_size", rng);
  const std::vector<uint64_t> entry = {inside(k, "__sys_recvfrom", rng),
                                       inside(k, "do_syscall_64", rng),
                                       inside(k, "entry_SYSCALL_64", rng)};
  for (size_t i = 0; i < n; ++i) {
    StackFrames frames{leaf, check};
    for (int depth = 0; depth < 4; ++depth) {
      const Symbol& f = *big[rng() % big.size()];
      frames.push_back(f.address + 1 + rng() % (f.size - 1));
    }
    frames.insert(frames.end(), entry.begin(), entry.end());
    d.sample_stacks.emplace(i + 1, std::move(frames));
    d.samples.push_back({bench::bench_sample_key(i + 1, round, i), 1 + i % 7});
  }
  d.contexts[HUC_CTX_KERNEL] = 1000 * (round + 1);
  return d;
}

struct Rss {
  double rss_mib = 0, anon_mib = 0, file_mib = 0;
};

Rss rss() {
  Rss r;
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    auto mib = [&](const char* key, double& into) {
      if (line.rfind(key, 0) == 0) into = std::stod(line.substr(std::strlen(key))) / 1024;
    };
    mib("VmRSS:", r.rss_mib);
    mib("RssAnon:", r.anon_mib);
    mib("RssFile:", r.file_mib);
  }
  return r;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

enum class Config { Without, InTheDrain, InTheBackground };
const char* name_of(Config c) {
  switch (c) {
    case Config::Without:
      return "without";
    case Config::InTheDrain:
      return "in the drain";
    case Config::InTheBackground:
      return "background";
  }
  return "?";
}

double cpu_ms(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}
double thread_cpu_ms() { return cpu_ms(CLOCK_THREAD_CPUTIME_ID); }
double process_cpu_ms() { return cpu_ms(CLOCK_PROCESS_CPUTIME_ID); }

struct RunResult {
  double startup_ms, first_drain_ms, first_drain_cpu_ms, steady_drain_ms, steady_drain_cpu_ms;
  double lines_ms;        // from the first drain's start until every stack went out with its lines
  double lookups_cpu_ms;  // the process's CPU time over the same span, the drains' included
  Rss after_first, steady;
  size_t addresses;
  size_t units;     // compilation units parsed over the run, again after the bound dropped them
  size_t kept;      // parsed units still held at the end (the bound: VmlinuxFile::kMaxUnits)
  uint64_t digest;  // of everything the drains put out: equal outputs, equal digests
};

// What the drains put out, summed over them: profile stacks with their lines and labels, copy
// shares. Order-free, so held stacks that go out drains later count the same.
class OutputDigest {
 public:
  void add(const IntervalDeltas& d) {
    for (const ProfileSample& s : d.stacks) {
      std::string key = s.labels->callsite + "|" + s.labels->copy + "|";
      for (const FramePtr& f : *s.stack) {
        key += f->function + "+" + std::to_string(f->offset);
        if (f->source) {
          for (const SourceLine& l : *f->source) key += "," + l.function + "@" + file_line(l);
        }
        key += ";";
      }
      for (size_t v = 0; v < kProfileValueCount; ++v)
        totals_[key + std::to_string(v)] += s.values[v];
    }
    for (const CopyDelta& c : d.copies) {
      totals_["copy|" + c.callsite + "|" + c.copy] += c.calls + c.samples;
    }
  }
  uint64_t value() const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the sorted totals
    for (const auto& [key, n] : totals_) {
      for (char c : key + "=" + std::to_string(n))
        h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    }
    return h;
  }

 private:
  std::map<std::string, uint64_t> totals_;
};

// One configuration in this process: kallsyms, [debuginfo], the first drain, then `drains` more.
RunResult run(const Kernel& k, const std::string& vmlinux, Config config, size_t stacks, int drains,
              const std::string& notes_path) {
  RunResult r{};
  mallopt(M_ARENA_MAX, 1);  // as the daemon's main() does, before any thread starts
  const std::string text = kallsyms_text(k);
  const std::vector<RawDrain> rounds = {make_drain(k, stacks, 0), make_drain(k, stacks, 1)};
  malloc_trim(0);
  const Rss base = rss();
  const auto t0 = Clock::now();
  std::istringstream in(text);
  KallsymsSymbolizer names(KallsymsIndex::parse(in), std::nullopt, nullptr, nullptr);
  std::unique_ptr<KernelDebuginfo> debuginfo;
  std::unique_ptr<SourceSymbolizer> sources;
  if (config != Config::Without) {
    DebuginfoSettings s;
    s.path = vmlinux;
    s.release = "bench";
    s.kernel_notes = notes_path;
    debuginfo = KernelDebuginfo::find(s, true);
    if (!debuginfo->ready()) {
      std::fprintf(stderr, "%s not accepted\n", vmlinux.c_str());
      std::exit(1);
    }
    sources = std::make_unique<SourceSymbolizer>(names, *debuginfo,
                                                 config == Config::InTheDrain
                                                     ? SourceSymbolizer::Lookups::InTheDrain
                                                     : SourceSymbolizer::Lookups::InTheBackground);
  }
  Symbolizer& symbols = sources ? static_cast<Symbolizer&>(*sources) : names;
  IntervalBuilder builder(CallsiteFolder(FoldingRules::defaults()));
  r.startup_ms = ms_since(t0);
  OutputDigest digest;
  double cpu_ms = 0;
  // As the daemon drains (ProfilingPipeline::drain_locked).
  auto drain = [&](const RawDrain& raw) {
    const auto t = Clock::now();
    const double cpu = thread_cpu_ms();
    if (sources) sources->begin_interval();  // the builder sees the generation move
    IntervalDeltas deltas = builder.build(raw, symbols);
    if (sources) sources->end_interval();
    const double ms = ms_since(t);
    cpu_ms = thread_cpu_ms() - cpu;
    digest.add(deltas);
    deltas = {};
    malloc_trim(0);  // as the daemon does after every drain
    return ms;
  };
  const double first_cpu = process_cpu_ms();
  r.first_drain_ms = drain(rounds[0]);
  r.first_drain_cpu_ms = cpu_ms;
  r.after_first = rss();
  std::vector<double> steady, steady_cpu;
  for (int i = 0; i < drains; ++i) {
    if (i == 0 && sources) {
      // The daemon would drain again an interval later; here the next drain comes once the
      // lookups are done, and puts out what was held.
      sources->wait_answered(std::chrono::minutes(5));
    }
    steady.push_back(drain(rounds[(i + 1) % 2]));
    steady_cpu.push_back(cpu_ms);
    if (i == 0) {
      r.lines_ms = builder.held() ? -1 : ms_since(t0) - r.startup_ms;
      r.lookups_cpu_ms = process_cpu_ms() - first_cpu;
    }
  }
  std::sort(steady.begin(), steady.end());
  std::sort(steady_cpu.begin(), steady_cpu.end());
  r.steady_drain_ms = steady[steady.size() / 2];
  r.steady_drain_cpu_ms = steady_cpu[steady_cpu.size() / 2];
  if (sources) sources->wait_answered(std::chrono::minutes(1));
  r.steady = rss();
  for (Rss* x : {&r.after_first, &r.steady}) {
    x->rss_mib -= base.rss_mib;
    x->anon_mib -= base.anon_mib;
    x->file_mib -= base.file_mib;
  }
  r.addresses = sources ? sources->cached_addresses() : 0;
  r.units = debuginfo ? debuginfo->parsed_units() : 0;
  r.kept = debuginfo ? debuginfo->resident_units() : 0;
  r.digest = digest.value();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s VMLINUX [--stacks N] [--drains D] [--rounds R]\n", argv[0]);
    return 2;
  }
  const std::string vmlinux = argv[1];
  size_t stacks = 200;
  int drains = 30, rounds = 3;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--stacks") stacks = std::stoul(argv[i + 1]);
    if (flag == "--drains") drains = std::stoi(argv[i + 1]);
    if (flag == "--rounds") rounds = std::stoi(argv[i + 1]);
  }
  const Kernel k = read_kernel(vmlinux);
  char notes_path[] = "/tmp/huc-bench-notes-XXXXXX";
  const int fd = mkstemp(notes_path);
  if (fd < 0 || write(fd, k.notes.data(), k.notes.size()) != static_cast<ssize_t>(k.notes.size())) {
    std::perror("notes");
    return 1;
  }
  close(fd);
  std::printf("%zu function symbols, %zu stacks per drain, %d steady drains, %d rounds\n",
              k.functions.size(), stacks, drains, rounds);
  std::printf("%-13s %8s %9s %7s %8s %8s %8s %8s %8s %8s %7s %7s %9s %5s %4s %16s\n", "config",
              "start ms", "1st drain", "1st cpu", "lines ms", "lines cpu", "drain ms", "drain cpu",
              "RSS+ 1st", "RSS+", "anon+", "file+", "addresses", "units", "kept", "output digest");
  for (int round = 0; round < rounds; ++round) {
    for (Config config : {Config::Without, Config::InTheDrain, Config::InTheBackground}) {
      int pipe_fd[2];
      if (pipe(pipe_fd) != 0) return 1;
      const pid_t pid = fork();
      if (pid == 0) {
        close(pipe_fd[0]);
        const RunResult r = run(k, vmlinux, config, stacks, drains, notes_path);
        if (write(pipe_fd[1], &r, sizeof(r)) != sizeof(r)) _exit(1);
        _exit(0);
      }
      close(pipe_fd[1]);
      RunResult r{};
      const bool got = read(pipe_fd[0], &r, sizeof(r)) == sizeof(r);
      close(pipe_fd[0]);
      int status = 0;
      waitpid(pid, &status, 0);
      if (!got || status != 0) return 1;
      const bool without = config == Config::Without;
      std::printf(
          "%-13s %8.1f %9.1f %7.1f %8.0f %8.0f %8.2f %8.2f %7.1fM %6.1fM %6.1fM %6.1fM %9zu %5zu "
          "%4zu %016llx\n",
          name_of(config), r.startup_ms, r.first_drain_ms, r.first_drain_cpu_ms,
          without ? 0.0 : r.lines_ms, without ? 0.0 : r.lookups_cpu_ms, r.steady_drain_ms,
          r.steady_drain_cpu_ms, r.after_first.rss_mib, r.steady.rss_mib, r.steady.anon_mib,
          r.steady.file_mib, r.addresses, r.units, r.kept,
          static_cast<unsigned long long>(r.digest));
      std::fflush(stdout);
    }
  }
  unlink(notes_path);
  return 0;
}
