#include "kernel_edge/probe_session.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "core/base/message_text.h"
#include "core/base/result.h"
#include "core/drain/site_table.h"
#include "kernel_edge/kernel_facts.h"
#include "kernel_edge/map_reader.h"
#include "kernel_edge/probe_object.h"
#include "kernel_edge/program_stats.h"

namespace hucprof {

namespace {

TargetStatus status_of(const TargetPlan& target, bool attached, const std::string& why_not) {
  return {.target = std::string(target.target.symbol),
          .attach_name = target.symbol,
          .mode = flavour_name(target.flavour),
          .attached = attached,
          .reason = attached ? target.reason : why_not};
}

// The targets whose programs a load of `plan` enables: those it attaches, less the refused.
std::set<size_t> enabled_targets(const AttachPlan& plan,
                                 const std::map<size_t, std::string>& refused) {
  std::set<size_t> enabled;
  for (size_t i = 0; i < plan.targets.size(); ++i) {
    if (plan.targets[i].attaches() && !refused.contains(i)) enabled.insert(i);
  }
  return enabled;
}

// Why the kernel refused a load of `enabled`, per program: each is loaded alone, so that a refused
// sub-check costs only itself and a refused __check_object_size is named as such.
std::map<size_t, std::string> refused_alone(const AttachPlan& plan, const std::set<size_t>& enabled,
                                            ProbeBuild build) {
  std::map<size_t, std::string> refused;
  for (size_t i : enabled) {
    Result<ProbeSkeleton> alone = open_probe_object(plan, {i}, build);
    if (!alone.ok()) continue;
    if (int e = probe_bpf__load(alone.value().get()); e) refused[i] = load_error(e);
  }
  return refused;
}

}  // namespace

ProbeSession::~ProbeSession() {
  links_.clear();  // detach before the programs go away
  probe_bpf__destroy(skel_);
}

ProbeSession::Loaded ProbeSession::load(const AttachPlan& requested) {
  Loaded out;
  out.plan = requested;
  AttachPlan& plan = out.plan;
  if (!plan.probes) {
    out.error = "__check_object_size: " + plan.check().reason;
    return out;
  }
  ProbeBuild build = plan.probe_build;
  // Benchmarks only (bench/vm/probe_overhead.py): the rescue program on or off whatever the
  // plan says; and never with the check's program stopped early, which then marks no run.
  if (const char* rescue = std::getenv("HUCPROF_BENCH_RESCUE")) {
    plan.rescue = plan.check().flavour == Flavour::Fentry && std::string_view(rescue) == "on";
    plan.rescue_reason = std::string("HUCPROF_BENCH_RESCUE=") + rescue + " (a benchmark's setting)";
    spdlog::warn("{}", plan.rescue_reason);
  }
  if (std::getenv("HUCPROF_BENCH_STOP_AFTER")) plan.rescue = false;
  // Each round either loads, refuses sub-check programs for good (one target each), gives up
  // direct reads or moves the plan one sub-check level down: it ends.
  while (true) {
    const std::set<size_t> enabled = enabled_targets(plan, out.refused);
    Result<ProbeSkeleton> opened = open_probe_object(plan, enabled, build);
    if (!opened.ok()) {
      out.error = opened.error().text;
      return out;
    }
    ProbeSkeleton& skel = opened.value();
    std::string why;
    if (int err = probe_bpf__load(skel.get()); err) {
      if (plan.rescue) {
        // The check's counts do not depend on it: without it they are what they were before it.
        plan.rescue = false;
        plan.rescue_reason = "no rescue program: the kernel refused it (" + errno_text(err) +
                             "; run with --log.level=debug for the verifier log)";
        spdlog::warn("probe mode: {}", plan.rescue_reason);
        continue;
      }
      if (build == ProbeBuild::DirectReads) {
        spdlog::warn(
            "probe mode: the kernel refused the check's program with direct reads ({}); "
            "it reads kernel memory by helper calls instead",
            errno_text(err));
        build = ProbeBuild::HelperReads;
        continue;
      }
      std::map<size_t, std::string> alone = refused_alone(plan, enabled, build);
      const size_t check = check_index(plan);
      if (!alone.empty() && !alone.contains(check)) {
        // Logged once, with the other targets' statuses, by whoever reads `refused`: `run`
        // (app/attach_sessions.cpp) or doctor's table.
        for (auto& [i, reason] : alone) out.refused.emplace(i, std::move(reason));
        continue;
      }
      why = alone.contains(check) ? alone[check]
                                  : load_error(err) + " (only together with the other programs)";
    } else if (plan.classifies()) {
      why = read_kernel_layout(*skel);
    }
    if (why.empty()) {
      std::unique_ptr<ProbeSession> self(new ProbeSession());
      self->skel_ = skel.release();
      self->build_ = build;
      self->latency_ = plan.maps.latency;
      spdlog::info("probe mode loads {}: reads kernel memory by {}", plan.probe_build_reason,
                   build == ProbeBuild::DirectReads ? "direct loads (bpf_rdonly_cast)"
                                                    : "bpf_probe_read_kernel() calls");
      self->possible_cpus_ = libbpf_num_possible_cpus();
      const TargetPlan& check = plan.targets[check_index(plan)];
      self->check_ = {program_for(*self->skel_, check, build), check.target.program, check.flavour,
                      nullptr};
      const BtfPtr kernel = load_kernel_btf();
      self->kprobe_skips_counted_ = kernel_link_info_has_kprobe_missed(kernel.get());
      out.session = std::move(self);
      return out;
    }
    std::optional<AttachPlan> lower = degrade_subchecks(plan, why);
    if (!lower) {
      out.error = "cannot load the probe BPF programs: " + why;
      return out;
    }
    spdlog::warn("{}", lower->subchecks_reason);
    plan = std::move(*lower);
  }
}

std::vector<TargetStatus> ProbeSession::statuses_of(const Loaded& loaded) {
  std::vector<TargetStatus> statuses;
  for (size_t i = 0; i < loaded.plan.targets.size(); ++i) {
    const TargetPlan& t = loaded.plan.targets[i];
    auto refused = loaded.refused.find(i);
    statuses.push_back(refused != loaded.refused.end() ? status_of(t, false, refused->second)
                       : !t.attaches()                 ? status_of(t, false, t.reason)
                       : loaded.session                ? status_of(t, true, "")
                                                       : status_of(t, false, loaded.error));
  }
  return statuses;
}

ProbeSession::Started ProbeSession::attach(Loaded loaded) {
  Started out;
  out.plan = loaded.plan;
  out.statuses = statuses_of(loaded);
  if (!loaded.session) {
    out.error = loaded.error;
    return out;
  }
  std::unique_ptr<ProbeSession> self = std::move(loaded.session);
  // Attached before the check's program: a trampoline runs the program attached last first, and
  // the rescue must see the check's program's run for the same check (hucprof_abi.h).
  if (out.plan.rescue && out.statuses[check_index(out.plan)].attached) {
    if (bpf_link* link = bpf_program__attach(rescue_program(*self->skel_, self->build_))) {
      self->links_.emplace_back(link);
      self->rescue_ = true;
    } else {
      out.plan.rescue = false;
      out.plan.rescue_reason = "no rescue program: attaching it failed (" + errno_text(errno) + ")";
      spdlog::warn("probe mode: {}", out.plan.rescue_reason);
    }
  }
  bool check_attached = false;
  for (size_t i = 0; i < out.plan.targets.size(); ++i) {
    const TargetPlan& target = out.plan.targets[i];
    if (!out.statuses[i].attached) continue;
    bpf_program* program = program_for(*self->skel_, target, self->build_);
    bpf_link* link = target.flavour == Flavour::Fentry
                         ? bpf_program__attach(program)
                         : bpf_program__attach_kprobe(
                               program, target.target.program == TargetProgram::CheckReturn,
                               target.symbol.c_str());
    if (!link) {
      // kprobes attach through perf_event_open(2): the paranoid sysctl applies to them too.
      out.statuses[i] = status_of(target, false,
                                  std::string(flavour_name(target.flavour)) +
                                      " attach failed: " + perf_permission_words(errno));
      continue;
    }
    self->links_.emplace_back(link);
    self->attached_.push_back({program, target.target.program, target.flavour, link});
    check_attached |= target.target.is_check();
  }
  if (check_attached && !out.plan.rescue_reason.empty()) {
    spdlog::info("probe mode: {}", out.plan.rescue_reason);
  }
  if (check_attached) out.session = std::move(self);  // else nothing useful attached
  return out;
}

void ProbeSession::retire_generation() {
  // The programs read it once per run; the program barrier that follows orders this write
  // before those runs (map_reader.h, retire_generation).
  skel_->bss->generation_seq = ++seq_;
}

// The hot call sites' tables of every CPU (hucprof_abi.h): the prefix of each CPU's scratch.
// Read only: the retired half stays still until the next retirement, and the programs reuse
// its slots then.
void ProbeSession::drain_site_tables(RawDrain& out) const {
  const bpf_map* scratch = skel_->maps.scratch;
  const size_t stride = (bpf_map__value_size(scratch) + 7) / 8 * 8;
  if (stride < sizeof(huc_site_table)) return;  // check_probe_abi refuses such an object
  std::vector<uint8_t> values(stride * static_cast<size_t>(possible_cpus_));
  const uint32_t zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(scratch), &zero, values.data()) != 0) {
    spdlog::warn("cannot read probe mode's per-CPU site tables: {}", errno_text(errno));
    return;
  }
  auto table = std::make_unique<huc_site_table>();
  for (int cpu = 0; cpu < possible_cpus_; ++cpu) {
    std::memcpy(table.get(), values.data() + static_cast<size_t>(cpu) * stride, sizeof(*table));
    add_table_sites(*table, seq_ - 1, out.sites, out.subchecks);
    out.helper_walks[HUC_WALK_LEARNED] += table->learned_walks;
  }
}

// The names of the caches this drain's objects are in: read from slab_caches (filled by BPF
// once per cache) the first time a pointer is seen, then from the session's own copy.
void ProbeSession::name_slab_caches(RawDrain& out) {
  const int fd = bpf_map__fd(skel_->maps.slab_caches);
  for (const auto& c : out.objects) {
    const uint64_t cache = c.key.cache;
    if (!cache) continue;
    auto known = slab_cache_names_.find(cache);
    if (known == slab_cache_names_.end()) {
      huc_slab_cache info{};
      if (bpf_map_lookup_elem(fd, &cache, &info) != 0) continue;
      known = slab_cache_names_.emplace(cache, slab_cache_name(info)).first;
    }
    out.slab_caches[cache] = known->second;
  }
}

void ProbeSession::drain(RawDrain& out) {
  out.probes = true;
  const uint8_t generation = static_cast<uint8_t>(seq_);
  const int short_fd = bpf_map__fd(skel_->maps.short_stacks);
  const int full_fd = bpf_map__fd(skel_->maps.full_stacks);
  auto read_short = [&](const huc_site_key& key) {
    read_stack<huc_short_stack>(short_fd, key.short_stack_id, key.generation, out.short_stacks);
  };
  drain_site_tables(out);
  drain_retired<huc_site_key, huc_site_value>(
      bpf_map__fd(skel_->maps.sites), generation,
      [&](const huc_site_key& key, const huc_site_value& v) {
        RawSiteCount site{key, v.calls, v.bytes, v.full_stack_id};
        std::copy(std::begin(v.ended_at), std::end(v.ended_at), site.ended_at.begin());
        out.sites.push_back(site);
        add_classified_subchecks(key, v.ended_at, out.subchecks);
      });
  drain_retired_counts(bpf_map__fd(skel_->maps.subchecks), generation, out.subchecks);
  drain_retired_counts(bpf_map__fd(skel_->maps.objects), generation, out.objects);
  name_slab_caches(out);
  merge_equal_keys(out.sites);
  merge_equal_keys(out.subchecks);
  for (const auto& c : out.sites) {
    read_short(c.key);
    read_stack<huc_stack>(full_fd, c.full_stack_id, c.key.generation, out.full_stacks);
  }
  if (latency_) drain_retired_counts(bpf_map__fd(skel_->maps.latency), generation, out.latency);
  for (const auto& c : out.subchecks) read_short(c.key.site);
  for (const auto& c : out.objects) read_short(c.key.site);
  for (const auto& c : out.latency) read_short(c.key.site);
  delete_retired_stacks(short_fd, generation);
  delete_retired_stacks(full_fd, generation);
  add_percpu_array(bpf_map__fd(skel_->maps.drops), possible_cpus_, out.drops);
  add_percpu_array(bpf_map__fd(skel_->maps.helper_walks), possible_cpus_, out.helper_walks);
  add_object_costs(skel_->obj, out);
  add_misses(out);
}

// A trampoline's skips are counted by every kernel with recursion_misses; a kprobe program's only
// where the kernel counts them at all (kprobe_skips_counted_): before, its recursion_misses stays
// 0 whatever it skipped, and a 0 would read as "nothing missed".
RawMisses ProbeSession::misses_of(const Attached& a) const {
  RawMisses m;
  m.program = bpf_program__name(a.program);
  m.what = missed_what_of(a.role);
  const bool kprobe = a.flavour == Flavour::Kprobe;
  if (!kprobe || kprobe_skips_counted_) {
    m.recursion = program_recursion_misses(bpf_program__fd(a.program));
  }
  if (kprobe && kprobe_skips_counted_ && a.link) {
    m.kprobe_missed = kprobe_link_missed(bpf_link__fd(a.link));
  }
  if (kprobe && !kprobe_skips_counted_) {
    m.uncounted =
        "this kernel counts neither a kprobe's own misses nor the runs of its program it skips "
        "while another BPF program runs on the CPU (both from 6.7)";
  } else if (!m.recursion) {
    m.uncounted = "this kernel's bpf_prog_info has no recursion_misses (5.12+)";
  }
  return m;
}

void ProbeSession::add_misses(RawDrain& out) const {
  // The rescued first: every check rescued was skipped before (the check's program's turn comes
  // first), so its skipped runs read after are never fewer.
  if (rescue_) {
    std::array<uint64_t, 1> rescued{};
    add_percpu_array(bpf_map__fd(skel_->maps.rescued), possible_cpus_, rescued);
    out.rescued_checks = out.rescued_checks.value_or(0) + rescued[0];
    add_percpu_array(bpf_map__fd(skel_->maps.rescue_drops), possible_cpus_, out.drops);
  }
  for (const Attached& a : attached_) {
    RawMisses m = misses_of(a);
    if (rescue_ && a.role == TargetProgram::Check) {
      m.rescued = out.rescued_checks;
      spdlog::debug("probe mode: the kernel skipped the check's program {} times, rescued {}",
                    m.recursion.value_or(0), m.rescued.value_or(0));
    }
    out.misses.push_back(std::move(m));
  }
}

MissedCoverage ProbeSession::check_misses_coverage() const {
  return missed_coverage({misses_of(check_)}).begin()->second;
}

}  // namespace hucprof
