#pragma once
// A synthetic kernel for the benchmarks and the drain's unit tests: N call-site functions, the
// check functions and a syscall entry path, as kallsyms text, plus drains shaped like the real
// ones, a DrainSource that hands them over one round after the other, and the daemon's drain
// run on it.
#include <chrono>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/drain/drain_source.h"
#include "core/drain/raw_drain.h"
#include "core/pipeline/drain_step.h"
#include "core/symbols/kallsyms_index.h"
#include "core/symbols/symbolizer.h"
#include "sample_keys.h"

namespace hucprof::bench {

struct FakeKernel {
  std::string kallsyms;
  std::vector<uint64_t> callers;  // a return address inside each call-site function
  uint64_t check = 0;             // inside __check_object_size
  uint64_t subcheck = 0;          // inside __virt_addr_valid
  std::vector<uint64_t> entry;    // __sys_recvfrom, do_syscall_64, entry_SYSCALL_64 (leaf first)

  explicit FakeKernel(int n) {
    std::ostringstream out;
    uint64_t addr = 0xffffffff81000000ull;
    out << std::hex;
    out << addr << " T _stext\n";
    addr += 0x100;
    auto function = [&](const std::string& name, uint64_t size) {
      out << std::hex << addr << " T " << name << "\n";
      const uint64_t inside = addr + 0x20;
      addr += size;
      return inside;
    };
    check = function("__check_object_size", 0x400);
    subcheck = function("__virt_addr_valid", 0x100);
    for (int i = 0; i < n; ++i)
      callers.push_back(function("callsite_fn_" + std::to_string(i), 0x300));
    for (const char* f : {"__sys_recvfrom", "do_syscall_64", "entry_SYSCALL_64"}) {
      entry.push_back(function(f, 0x200));
    }
    out << std::hex << addr << " T _etext\n";
    kallsyms = out.str();
  }

  KallsymsIndex index() const {
    std::istringstream in(kallsyms);
    return KallsymsIndex::parse(in);
  }

  // Probe mode: one direct-caller key per call-site function with the full stack the kernel
  // captured for it, as every drain hands them over (per-interval counts, hucprof_abi.h).
  RawDrain probe_drain(uint64_t round) const {
    RawDrain d;
    d.probes = true;
    for (size_t i = 0; i < callers.size(); ++i) {
      huc_site_key key{};
      key.caller = callers[i];
      key.syscall_nr = static_cast<int32_t>(i % 50);
      key.direction = static_cast<uint8_t>(i % 2);
      key.generation = static_cast<uint8_t>(round);
      const uint64_t full_stack_id = i + 1;  // content ids are never 0
      d.sites.push_back({key, 1000 + round % 7, 64000 + i, full_stack_id});
      d.full_stacks.emplace(full_stack_id, path_through(callers[i]));
    }
    return d;
  }

  // Sampling mode: one stack per call-site function (so N distinct stacks), 1..7 samples each
  // per interval; the context counts stay cumulative, as the kernel's per-CPU arrays are.
  RawDrain sample_drain(uint64_t round) const {
    RawDrain d;
    d.sampling = true;
    for (size_t i = 0; i < callers.size(); ++i) {
      const uint64_t id = i + 1;
      d.samples.push_back({bench_sample_key(id, round, i), 1 + i % 7});
      StackFrames frames{subcheck};
      const StackFrames path = path_through(callers[i]);
      frames.insert(frames.end(), path.begin(), path.end());
      d.sample_stacks.emplace(id, std::move(frames));
    }
    // Each of the N stacks takes 1..7 samples a round: about 1 % of kernel CPU.
    const uint64_t kernel = 400 * callers.size() * round;
    d.contexts = {kernel, kernel / 2, kernel * 4};
    return d;
  }

  // The check, the call site, the syscall entry (leaf first).
  StackFrames path_through(uint64_t caller) const {
    StackFrames frames{check, caller};
    frames.insert(frames.end(), entry.begin(), entry.end());
    return frames;
  }
};

// The kernel side of a drain (core/drain/drain_source.h) on a FakeKernel: each read() is the
// next round's probe or sampling drain, as the daemon's sessions read them.
class FakeKernelSource final : public DrainSource {
 public:
  enum class Mode { Probes, Sampling };
  FakeKernelSource(const FakeKernel& kernel, Mode mode) : kernel_(kernel), mode_(mode) {}

  RawDrain read() override {
    ++round_;
    return mode_ == Mode::Probes ? kernel_.probe_drain(round_) : kernel_.sample_drain(round_);
  }
  void named() override { ++named_; }
  uint64_t rounds() const { return round_; }
  uint64_t named_drains() const { return named_; }

 private:
  const FakeKernel& kernel_;
  Mode mode_;
  uint64_t round_ = 0;
  uint64_t named_ = 0;
};

// The daemon's drain (DrainStep) on a FakeKernel of `callsites` call-site functions, as
// `hucprof run` configures it by default (--top-k 20), probe mode or sampling.
struct FakeDrains {
  FakeKernel kernel;
  KallsymsSymbolizer symbols;
  FakeKernelSource source;
  DrainStep step;

  static DrainStep::Config config(FakeKernelSource::Mode mode) {
    DrainStep::Config c;
    c.top_k = 20;
    c.header.sampling = mode == FakeKernelSource::Mode::Sampling;
    c.header.probes = !c.header.sampling;
    c.header.sample_period_ns = 10'000'000;
    c.started_at = monotonic_seconds(std::chrono::steady_clock::now());
    return c;
  }

  FakeDrains(int callsites, FakeKernelSource::Mode mode)
      : FakeDrains(callsites, mode, config(mode)) {}
  FakeDrains(int callsites, FakeKernelSource::Mode mode, DrainStep::Config c)
      : kernel(callsites),
        symbols(kernel.index(), std::nullopt, nullptr, nullptr),
        source(kernel, mode),
        step(std::move(c), symbols, nullptr) {}

  // The next round's drain, a periodic one: its snapshot.
  hucprof::v1::Snapshot next() {
    DrainStep::Notes notes;
    return step.run(source, /*end_interval=*/true, /*settle=*/false, notes);
  }
};

}  // namespace hucprof::bench
