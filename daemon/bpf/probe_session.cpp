#include "bpf/probe_session.h"

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "hucprof_abi.h"
// The skeleton after the ABI header: its rodata struct uses struct huc_range.
#include "bpf/abi_checks.h"
#include "bpf/map_reader.h"
#include "core/address_ranges.h"
#include "core/probe_targets.h"
#include "core/symbol_name.h"
#include "probe.skel.h"

namespace hucprof {

namespace {

using hucprof::v1::ProbeStatus;

struct Plan {
  const ProbeTarget* target = nullptr;
  std::string attach_name;
  std::string mode;  // "fentry" | "kprobe" | ""
  std::string reason;
  bpf_program* fentry = nullptr;
  bpf_program* kprobe = nullptr;
};

// The exact kallsyms name to attach to: the symbol itself if present, else a suffixed clone
// (check_heap_object.part.0); never the .cold part, which is not a function entry.
std::string attach_name_for(const KallsymsIndex& kallsyms, std::string_view symbol) {
  if (kallsyms.find_exact(symbol)) return std::string(symbol);
  for (const auto& sym : kallsyms.find_normalized(symbol)) {
    if (sym.name.find(".cold") == std::string::npos) return sym.name;
  }
  return "";
}

std::string policy_name(AttachPolicy p) {
  switch (p) {
    case AttachPolicy::Fentry:
      return "fentry";
    case AttachPolicy::Kprobe:
      return "kprobe";
    case AttachPolicy::Auto:
      break;
  }
  return "auto";
}

void choose_mode(Plan& plan, const ProbeConfig& config, const KernelFacts& facts) {
  std::string fentry_why, kprobe_why;
  if (config.policy != AttachPolicy::Kprobe) {
    fentry_why = facts.btf.ok ? fentry_attach_error(plan.attach_name) : facts.btf.detail;
    if (fentry_why.empty()) {
      plan.mode = "fentry";
      return;
    }
  } else {
    fentry_why = "fentry not tried (--probe.attach=kprobe)";
  }
  if (config.policy != AttachPolicy::Fentry) {
    if (facts.kprobes.ok) {
      plan.mode = "kprobe";
      return;
    }
    kprobe_why = facts.kprobes.detail;
  } else {
    kprobe_why = "kprobe not tried (--probe.attach=fentry)";
  }
  plan.reason = "fentry: " + fentry_why + "; kprobe: " + kprobe_why;
}

void set_ranges(huc_range* dst, __u32* count, const AddressRanges& ranges) {
  for (size_t i = 0; i < ranges.ranges.size(); ++i) dst[i] = ranges.ranges[i];
  *count = static_cast<__u32>(ranges.ranges.size());
}

ProbeStatus status_of(const Plan& plan) {
  ProbeStatus s;
  s.set_target(std::string(plan.target->symbol));
  s.set_attach_name(plan.attach_name);
  s.set_mode(plan.mode);
  s.set_attached(!plan.mode.empty() && plan.reason.empty());
  s.set_reason(plan.reason);
  return s;
}

}  // namespace

ProbeSession::~ProbeSession() {
  links_.clear();  // detach before the programs go away
  probe_bpf__destroy(skel_);
}

ProbeSession::Started ProbeSession::start(const ProbeConfig& config, const KallsymsIndex& kallsyms,
                                          const KernelFacts& facts) {
  Started out;
  std::unique_ptr<ProbeSession> self(new ProbeSession());
  self->skel_ = probe_bpf__open();
  if (!self->skel_) {
    out.error = std::string("cannot open the probe BPF object: ") + strerror(errno);
    return out;
  }
  bpf_object* obj = self->skel_->obj;
  if (auto mismatch = check_probe_abi(obj); !mismatch.empty()) {
    out.error = "BPF/daemon ABI mismatch: " + mismatch;
    return out;
  }

  // Every program starts disabled; each plan enables the one flavour it will attach.
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) bpf_program__set_autoload(prog, false);

  std::vector<Plan> plans;
  bool check_ok = false;
  for (const ProbeTarget& target : probe_targets()) {
    Plan plan;
    plan.target = &target;
    plan.fentry = bpf_object__find_program_by_name(obj, std::string(target.fentry_prog).c_str());
    plan.kprobe = bpf_object__find_program_by_name(obj, std::string(target.kprobe_prog).c_str());
    plan.attach_name = attach_name_for(kallsyms, target.symbol);
    if (plan.attach_name.empty()) {
      plan.reason = "not a real symbol on this kernel (inlined or not built in)";
    } else if (!target.is_check && !check_ok) {
      plan.reason = "skipped: __check_object_size is not attached, sub-checks need it";
    } else {
      choose_mode(plan, config, facts);
    }
    if (target.is_check) check_ok = !plan.mode.empty();
    if (plan.mode == "fentry") {
      bpf_program__set_autoload(plan.fentry, true);
      bpf_program__set_attach_target(plan.fentry, 0, plan.attach_name.c_str());
    } else if (plan.mode == "kprobe") {
      bpf_program__set_autoload(plan.kprobe, true);
    }
    plans.push_back(std::move(plan));
  }

  std::string check_mode = plans.front().mode;
  Plan latency_plan;
  static constexpr ProbeTarget kReturnTarget{"__check_object_size:return",
                                             "huc_fexit_check_object_size",
                                             "huc_kretprobe_check_object_size", false};
  if (config.latency && !check_mode.empty()) {
    latency_plan.target = &kReturnTarget;
    latency_plan.attach_name = plans.front().attach_name;
    latency_plan.mode = check_mode;
    latency_plan.fentry = self->skel_->progs.huc_fexit_check_object_size;
    latency_plan.kprobe = self->skel_->progs.huc_kretprobe_check_object_size;
    if (check_mode == "fentry") {
      bpf_program__set_autoload(latency_plan.fentry, true);
      bpf_program__set_attach_target(latency_plan.fentry, 0, latency_plan.attach_name.c_str());
    } else {
      bpf_program__set_autoload(latency_plan.kprobe, true);
    }
  }

  if (!check_ok) {
    for (const auto& plan : plans) out.statuses.push_back(status_of(plan));
    return out;
  }

  auto helpers = build_address_ranges(kallsyms, config.helper_symbols);
  auto dispatchers = build_address_ranges(kallsyms, dispatcher_symbols());
  if (helpers.overflow) {
    spdlog::warn(
        "{} copy-helper ranges did not fit into BPF's {}; their callers fold as "
        "[truncated]",
        helpers.overflow, HUC_MAX_RANGES);
  }
  auto* rodata = self->skel_->rodata;
  set_ranges(rodata->helper_ranges, &rodata->nr_helper_ranges, helpers);
  set_ranges(rodata->dispatcher_ranges, &rodata->nr_dispatcher_ranges, dispatchers);
  rodata->latency_enabled = config.latency;

  if (int err = probe_bpf__load(self->skel_); err) {
    out.error = std::string("cannot load the probe BPF programs: ") + strerror(-err) +
                " (run with --log.level=debug for the verifier log)";
    for (auto& plan : plans) {
      if (plan.reason.empty()) plan.reason = out.error;
      out.statuses.push_back(status_of(plan));
    }
    return out;
  }

  auto attach = [&](Plan& plan) {
    if (plan.mode.empty() || !plan.reason.empty()) return;
    bpf_link* link = plan.mode == "fentry"
                         ? bpf_program__attach(plan.fentry)
                         : bpf_program__attach_kprobe(plan.kprobe, plan.target == &kReturnTarget,
                                                      plan.attach_name.c_str());
    if (!link) {
      // kprobes attach through perf_event_open(2): the paranoid sysctl applies to them too.
      int err = errno;
      plan.reason = plan.mode + " attach failed: " + perf_permission_words(err);
      return;
    }
    self->links_.emplace_back(link);
  };
  for (auto& plan : plans) attach(plan);
  if (config.latency && latency_plan.target) {
    attach(latency_plan);
    plans.push_back(latency_plan);
  }

  for (const auto& plan : plans) out.statuses.push_back(status_of(plan));
  spdlog::debug("probe attach policy {}", policy_name(config.policy));
  if (!out.statuses.front().attached()) return out;  // nothing useful attached
  self->possible_cpus_ = libbpf_num_possible_cpus();
  out.session = std::move(self);
  return out;
}

void ProbeSession::drain(RawDrain& out) {
  out.probes = true;
  const int cpus = possible_cpus_;
  auto cache_short_stack = [&](int32_t id) {
    if (id < 0 || short_stack_cache_.contains(id)) return;
    auto frames = read_stack(bpf_map__fd(skel_->maps.short_stacks), id, HUC_SHORT_STACK_DEPTH);
    if (!frames.empty()) short_stack_cache_.emplace(id, std::move(frames));
  };
  // For profiles: each full stack is handed on once, in the drain that first reads it (the
  // profile keeps it symbolized); not copied into every drain like the short stacks.
  auto read_full_stack = [&](int32_t id) {
    if (id < 0 || full_stacks_read_.contains(id)) return;
    auto frames = read_stack(bpf_map__fd(skel_->maps.full_stacks), id, HUC_FULL_STACK_DEPTH);
    if (frames.empty()) return;
    full_stacks_read_.insert(id);
    out.full_stacks.emplace(id, std::move(frames));
  };
  for_each_percpu_entry<huc_site_key, huc_site_value>(
      bpf_map__fd(skel_->maps.sites), cpus, [&](const huc_site_key& key, const auto& values) {
        RawSiteCount c;
        c.key = key;
        for (const auto& v : values) {
          c.calls += v.calls;
          c.bytes += v.bytes;
          // Set on the CPU that created the key only.
          if (c.full_stack_id < 0 && v.full_stack_ref != 0) {
            c.full_stack_id = static_cast<int32_t>(v.full_stack_ref - 1);
          }
        }
        out.sites.push_back(c);
        cache_short_stack(key.short_stack_id);
        read_full_stack(c.full_stack_id);
      });
  read_percpu_counts(bpf_map__fd(skel_->maps.subchecks), cpus, out.subchecks);
  read_percpu_counts(bpf_map__fd(skel_->maps.latency), cpus, out.latency);
  // A call site that is new while this drain runs can reach the subchecks (or latency) map after
  // the sites map was read; without its short stack in this drain its key folds to "[unknown]"
  // for good (the delta is consumed). Read the stack of every key that names one.
  for (const auto& c : out.subchecks) cache_short_stack(c.key.site.short_stack_id);
  for (const auto& c : out.latency) cache_short_stack(c.key.site.short_stack_id);
  out.short_stacks = short_stack_cache_;
  add_percpu_array(bpf_map__fd(skel_->maps.drops), cpus, out.drops);
  add_percpu_array(bpf_map__fd(skel_->maps.helper_walks), cpus, out.helper_walks);
}

}  // namespace hucprof
