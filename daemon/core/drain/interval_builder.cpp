#include "core/drain/interval_builder.h"

#include <algorithm>
#include <tuple>

#include "core/drain/latency_slots.h"
#include "core/symbols/copy_path.h"

namespace hucprof {

namespace {
constexpr const char* kUnknownCallsite = "[unknown]";

const char* direction_name(uint8_t direction) {
  return direction == HUC_DIR_TO_USER ? "to_user" : "from_user";
}
}  // namespace

IntervalBuilder::IntervalBuilder(CallsiteFolder folder)
    : folder_(std::move(folder)), stacks_(folder_.rules()) {}

void IntervalBuilder::forget_folds_if_stale(const Symbolizer& symbols) {
  if (symbols.generation() == symbols_generation_) return;
  symbols_generation_ = symbols.generation();
  site_folds_.clear();
  sample_folds_.clear();
  full_stacks_.clear();
  site_stacks_.clear();
}

IntervalBuilder::SiteTuple IntervalBuilder::tuple_of(const huc_site_key& key) {
  return {key.caller, key.short_stack_id, key.syscall_nr, key.direction};
}

IntervalBuilder::Fold IntervalBuilder::fold_frames(const ResolvedStack& frames) const {
  Fold out;
  std::vector<std::string> names;
  names.reserve(frames.size());
  for (const auto& frame : frames) {
    if (!frame) {
      // An unnamed frame cannot be a check or a helper; stop here so it does not get skipped
      // over and mislabel the call site.
      if (names.empty()) {
        out.site.callsite = kUnknownCallsite;
        out.site.syscall = "none";
        out.drop = kDropSymbolUnresolved;
        return out;
      }
      names.push_back(kUnknownCallsite);
      continue;
    }
    names.push_back(frame->name);
  }
  out.site = folder_.fold(names);
  if (out.site.callsite == kUnknownCallsite) out.drop = kDropSymbolUnresolved;
  if (out.site.truncated) out.drop = kDropStackTruncated;
  return out;
}

IntervalBuilder::Fold IntervalBuilder::fold_site(const huc_site_key& key, const RawDrain& drain,
                                                 Symbolizer& symbols) {
  auto tuple = tuple_of(key);
  if (const Fold* cached = site_folds_.find(tuple, drain_)) return *cached;
  Fold fold;
  if (key.short_stack_id != 0) {
    // A sub-check or timing key may come a drain after the check's own key (hucprof_abi.h:
    // it is written in the generation current when it ran), and its stack with the check's
    // key: then the cache above answered.
    auto stack = drain.short_stacks.find(key.short_stack_id);
    if (stack == drain.short_stacks.end()) {
      fold.site = {kUnknownCallsite, "none", "", false};
      fold.drop = kDropStackMissing;
      fold.site.syscall = syscall_label(key.syscall_nr, fold.site);
      fold.labels = site_labels(key, fold.site);
      return fold;  // not cached: a later drain may have the stack
    }
    fold = fold_frames(resolve_stack(stack->second, symbols));
  } else {
    fold = fold_frames({symbols.return_frame(key.caller)});
  }
  fold.site.syscall = syscall_label(key.syscall_nr, fold.site);
  fold.labels = site_labels(key, fold.site);
  return site_folds_.put(tuple, std::move(fold), drain_);
}

IntervalBuilder::Fold IntervalBuilder::fold_sample(const huc_sample_key& key, const RawDrain& drain,
                                                   Symbolizer& symbols) {
  if (Fold* cached = sample_folds_.find(key.stack_id, drain_)) {
    if (!cached->stack.stack) finish_sample(*cached, key, symbols);
    return *cached;
  }
  auto stack = drain.sample_stacks.find(key.stack_id);
  if (stack == drain.sample_stacks.end()) {
    Fold fold;
    fold.site = {kUnknownCallsite, "none", "", false};
    fold.drop = kDropStackMissing;
    fold.stack = make_stack({}, true, symbols);
    fold.labels = sample_labels(key, fold.site);
    finish_sample(fold, key, symbols);
    return fold;
  }
  // Resolved once for both: the call site's fold and the profile stack. The leaf is the
  // sampled instruction, not a return address.
  const uint64_t unanswered = symbols.unanswered();
  ResolvedStack frames = resolve_stack(stack->second, symbols, true);
  const bool answered = symbols.unanswered() == unanswered;
  Fold fold = fold_frames(frames);
  fold.stack = make_stack(stack->second, true, std::move(frames), answered);
  fold.labels = sample_labels(key, fold.site);
  finish_sample(fold, key, symbols);
  return sample_folds_.put(key.stack_id, std::move(fold), drain_);
}

void IntervalBuilder::finish_sample(Fold& fold, const huc_sample_key& key, Symbolizer& symbols) {
  finish(fold.stack, symbols);
  if (!fold.stack.stack) return;
  fold.copy = copy_label(*fold.stack.stack, symbols);
  fold.labels = stacks_.with_copy(sample_labels(key, fold.site), fold.copy);
}

IntervalBuilder::Stack IntervalBuilder::make_stack(const StackFrames& frames, bool sampled,
                                                   Symbolizer& symbols) {
  const uint64_t unanswered = symbols.unanswered();
  ResolvedStack resolved = resolve_stack(frames, symbols, sampled);
  return make_stack(frames, sampled, std::move(resolved), symbols.unanswered() == unanswered);
}

IntervalBuilder::Stack IntervalBuilder::make_stack(const StackFrames& frames, bool sampled,
                                                   ResolvedStack resolved, bool answered) {
  Stack out;
  out.sampled = sampled;
  if (!answered) {
    // Not interned yet: the interner keeps every stack it was given, and this one is not what
    // the profiles will get.
    out.frames = std::make_shared<const StackFrames>(frames);
    return out;
  }
  out.stack = sampled ? stacks_.sampled(std::move(resolved)) : stacks_.probed(std::move(resolved));
  return out;
}

void IntervalBuilder::finish(Stack& stack, Symbolizer& symbols, bool force) {
  if (stack.stack) return;
  const uint64_t unanswered = symbols.unanswered();
  ResolvedStack resolved = resolve_stack(*stack.frames, symbols, stack.sampled);
  if (symbols.unanswered() != unanswered && !force) return;
  stack.stack =
      stack.sampled ? stacks_.sampled(std::move(resolved)) : stacks_.probed(std::move(resolved));
  stack.frames.reset();
}

IntervalBuilder::Stack IntervalBuilder::own_stack(const huc_site_key& key, const RawDrain& drain,
                                                  Symbolizer& symbols, bool& complete) {
  complete = true;
  if (key.short_stack_id == 0) {
    return make_stack(key.caller ? StackFrames{key.caller} : StackFrames{}, false, symbols);
  }
  auto frames = drain.short_stacks.find(key.short_stack_id);
  complete = frames != drain.short_stacks.end();
  return make_stack(complete ? frames->second : StackFrames{}, false, symbols);
}

IntervalBuilder::Stack IntervalBuilder::site_stack(const RawSiteCount& site, const RawDrain& drain,
                                                   Symbolizer& symbols) {
  const SiteTuple tuple = tuple_of(site.key);
  std::optional<Stack> stack;
  if (site.full_stack_id != 0) {
    if (Stack* cached = full_stacks_.find(site.full_stack_id, drain_)) {
      finish(*cached, symbols);
      stack = *cached;
    } else if (auto full = drain.full_stacks.find(site.full_stack_id);
               full != drain.full_stacks.end()) {
      stack =
          full_stacks_.put(site.full_stack_id, make_stack(full->second, false, symbols), drain_);
    }
  }
  if (!stack) {
    // No full stack this time (the stack map was full): the call site's recent one is a better
    // guess than the key's short stack, which stops at the call site.
    if (Stack* seen = site_stacks_.find(tuple, drain_)) {
      finish(*seen, symbols);
      return *seen;
    }
    bool complete = false;
    stack = own_stack(site.key, drain, symbols, complete);
    if (!complete) return *stack;  // not kept: a later drain may have the short stack
  }
  return site_stacks_.put(tuple, std::move(*stack), drain_);
}

IntervalBuilder::Stack IntervalBuilder::key_stack(const huc_site_key& key, const RawDrain& drain,
                                                  Symbolizer& symbols) {
  if (Stack* seen = site_stacks_.find(tuple_of(key), drain_)) {
    finish(*seen, symbols);
    return *seen;
  }
  bool complete = false;
  return own_stack(key, drain, symbols, complete);
}

LabelsPtr IntervalBuilder::site_labels(const huc_site_key& key, const FoldedCallsite& site) {
  return stacks_.labels(site.callsite, site.syscall, "", direction_name(key.direction));
}

LabelsPtr IntervalBuilder::sample_labels(const huc_sample_key& key, const FoldedCallsite& site) {
  return stacks_.labels(site.callsite, syscall_label(key.syscall_nr, site),
                        site.step.empty() ? kEntryStep : site.step, "");
}

std::string IntervalBuilder::copy_label(const ProfileStack& stack,
                                        const Symbolizer& symbols) const {
  if (!symbols.has_sources()) return "";
  std::string copy = copy_function(stack, stacks_.rules());
  return copy.empty() ? kUnknownCopy : copy;
}

void IntervalBuilder::add_stack(IntervalDeltas& out, StackPtr stack, LabelsPtr labels,
                                ProfileValue value, uint64_t n) {
  if (stacks_.is_overflow(stack)) out.drops[kDropProfileStackLimit] += n;
  ProfileSample sample{std::move(stack), std::move(labels), {}};
  sample.values[value] = n;
  out.stacks.push_back(std::move(sample));
}

void IntervalBuilder::offer(IntervalDeltas& out, Held held, Symbolizer& symbols) {
  if (!held.stack.stack && held_.size() < kMaxHeld) {
    held.since = drain_;
    held_.push_back(std::move(held));
    return;
  }
  emit(out, std::move(held), symbols);
}

void IntervalBuilder::emit(IntervalDeltas& out, Held held, Symbolizer& symbols) {
  finish(held.stack, symbols, true);
  const StackPtr& checked = held.stack.stack;
  const std::string copy = copy_label(*checked, symbols);
  StackPtr stack = held.subcheck >= 0
                       ? stacks_.with_subcheck(checked, static_cast<uint32_t>(held.subcheck))
                       : checked;
  if (held.events && stacks_.is_overflow(stack)) {
    out.drops[kDropProfileStackLimit] += held.events;
  }
  out.stacks.push_back({std::move(stack), stacks_.with_copy(held.labels, copy), held.values});
  if (held.copy && !copy.empty()) {
    held.copy->copy = copy;
    out.copies.push_back(std::move(*held.copy));
  }
}

void IntervalBuilder::release(IntervalDeltas& out, Symbolizer& symbols, bool all) {
  std::vector<Held> still;
  for (Held& held : held_) {
    finish(held.stack, symbols);
    if (held.stack.stack || all || drain_ - held.since >= kHoldDrains) {
      emit(out, std::move(held), symbols);
    } else {
      still.push_back(std::move(held));
    }
  }
  held_ = std::move(still);
}

std::string IntervalBuilder::syscall_label(int32_t nr, const FoldedCallsite& folded) const {
  if (auto name = syscall_name(nr)) return *name;
  return folded.syscall.empty() ? "none" : folded.syscall;
}

void IntervalBuilder::forget_unused() {
  if (drain_ < kFoldKeepDrains) return;
  const uint64_t oldest_kept = drain_ - kFoldKeepDrains + 1;  // what the last drains used
  site_folds_.forget_unused_since(oldest_kept);
  sample_folds_.forget_unused_since(oldest_kept);
  full_stacks_.forget_unused_since(oldest_kept);
  site_stacks_.forget_unused_since(oldest_kept);
  stacks_.release_unused();
  // The drains' comms are named while a label set holds them: the store names those it keeps.
  tasks_.forget_comms_except(stacks_.comms());
}

IntervalBuilder::WorkloadLabels IntervalBuilder::workload_labels(const LabelsPtr& labels,
                                                                 uint64_t cgroup_id,
                                                                 WorkloadNames* workloads) {
  // 0 is no cgroup's id (the root's is 1): a probe key without --probe.workloads.
  if (!workloads || cgroup_id == 0) return {labels->workload, labels->workload_kind};
  const Workload& workload = workloads->workload_of(cgroup_id);
  return {workload.name, kind_name(workload.kind)};
}

LabelsPtr IntervalBuilder::with_workload(LabelsPtr labels, uint64_t cgroup_id,
                                         WorkloadNames* workloads) {
  const auto [workload, kind] = workload_labels(labels, cgroup_id, workloads);
  return stacks_.with_workload(labels, workload, kind);
}

void IntervalBuilder::add_busy(IntervalDeltas& out, const RawDrain& drain,
                               WorkloadNames& workloads) {
  for (const auto& busy : drain.busy) {
    if (busy.count == 0) continue;
    const Workload& workload = workloads.workload_of(busy.key.cgroup_id);
    WorkloadBusy& to = out.busy_by_workload[workload.name];
    to.kind = kind_name(workload.kind);
    if (busy.key.context == HUC_CTX_USER) {
      to.user += busy.count;
    } else {
      to.kernel += busy.count;
      if (busy.key.excluded) to.interrupts += busy.count;
    }
  }
}

// The slab checks of each call site by cache and region; what the objects map could not count
// (it was full) stays an unidentified slab object, so the call site's slab checks add up.
void IntervalBuilder::add_slab_objects(const RawDrain& drain, Symbolizer& symbols,
                                       std::map<std::string, uint64_t> slab_checks,
                                       IntervalDeltas& out) {
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> identified;
  for (const auto& object : drain.objects) {
    if (object.count == 0) continue;
    Fold fold = fold_site(object.key.site, drain, symbols);
    auto name = drain.slab_caches.find(object.key.cache);
    const std::string cache = name == drain.slab_caches.end() ? kUnknownObject : name->second;
    identified[{fold.site.callsite, cache, slab_region_name(object.key.region)}] += object.count;
  }
  for (const auto& [key, count] : identified) {
    const auto& [callsite, cache, region] = key;
    uint64_t& left = slab_checks[callsite];
    left -= std::min(left, count);
    out.objects.push_back({callsite, object_kind_name(HUC_END_SLAB), cache, count, region});
  }
  for (const auto& [callsite, left] : slab_checks) {
    if (left) {
      out.objects.push_back({callsite, object_kind_name(HUC_END_SLAB), kUnknownObject, left,
                             slab_region_name(HUC_REGION_UNKNOWN)});
    }
  }
}

IntervalDeltas IntervalBuilder::build(const RawDrain& drain, Symbolizer& symbols,
                                      WorkloadNames* workloads) {
  forget_folds_if_stale(symbols);
  ++drain_;
  IntervalDeltas out;
  out.stacks.reserve(held_.size() + drain.sites.size() + drain.subchecks.size() +
                     drain.latency.size() + drain.samples.size());
  auto count_drop = [&](const char* reason, uint64_t n) {
    if (reason) out.drops[reason] += n;
  };
  release(out, symbols, false);

  // Sites first: their folds and stacks serve the sub-check and timing keys of the same call
  // sites.
  std::map<std::string, uint64_t> slab_checks;  // call site → classified checks of slab objects
  for (const auto& site : drain.sites) {
    if (site.calls == 0 && site.bytes == 0) continue;
    Fold fold = fold_site(site.key, drain, symbols);
    count_drop(fold.drop, site.calls);
    const char* direction = direction_name(site.key.direction);
    CheckDelta delta{fold.site.callsite, fold.site.syscall, direction, site.calls, site.bytes};
    LabelsPtr labels = with_workload(fold.labels, site.key.cgroup_id, workloads);
    delta.workload = labels->workload;
    delta.workload_kind = labels->workload_kind;
    out.checks.push_back(std::move(delta));
    for (uint32_t end = 0; end < HUC_CLASSIFY_ENDS; ++end) {
      if (!site.ended_at[end]) continue;
      if (end == HUC_END_SLAB) {
        slab_checks[fold.site.callsite] += site.ended_at[end];
      } else {
        out.objects.push_back({fold.site.callsite, object_kind_name(end), kUnknownObject,
                               site.ended_at[end], kNoRegion});
      }
    }
    Held held;
    held.stack = site_stack(site, drain, symbols);
    held.labels = std::move(labels);
    held.values[kCalls] = held.events = site.calls;
    held.values[kBytes] = site.bytes;
    held.copy = CopyDelta{fold.site.callsite, fold.site.syscall, direction, "", site.calls, 0};
    offer(out, std::move(held), symbols);
  }
  add_slab_objects(drain, symbols, std::move(slab_checks), out);
  for (const auto& sub : drain.subchecks) {
    if (sub.count == 0) continue;
    Fold fold = fold_site(sub.key.site, drain, symbols);
    count_drop(fold.drop, sub.count);
    out.subchecks.push_back({fold.site.callsite, subcheck_step_name(sub.key.kind), sub.count});
    Held held;
    held.stack = key_stack(sub.key.site, drain, symbols);
    held.subcheck = static_cast<int>(sub.key.kind);
    held.labels = with_workload(
        stacks_.labels(fold.site.callsite, fold.site.syscall, subcheck_step_name(sub.key.kind),
                       direction_name(sub.key.site.direction)),
        sub.key.site.cgroup_id, workloads);
    held.values[kSubchecks] = held.events = sub.count;
    offer(out, std::move(held), symbols);
  }
  std::map<std::string, std::vector<uint64_t>> latency_by_site;
  for (const auto& lat : drain.latency) {
    if (lat.count == 0 || lat.key.slot >= HUC_LATENCY_SLOTS) continue;
    Fold fold = fold_site(lat.key.site, drain, symbols);
    count_drop(fold.drop, lat.count);
    auto& buckets = latency_by_site[fold.site.callsite];
    buckets.resize(HUC_LATENCY_SLOTS);
    buckets[lat.key.slot] += lat.count;
    Held held;  // not counted twice as a drop (events 0): the calls of this key were
    held.stack = key_stack(lat.key.site, drain, symbols);
    held.labels = with_workload(fold.labels, lat.key.site.cgroup_id, workloads);
    held.values[kLatencyNs] = lat.count * latency_slot_midpoint_ns(lat.key.slot);
    offer(out, std::move(held), symbols);
  }
  for (auto& [callsite, buckets] : latency_by_site) {
    out.latency.push_back({callsite, std::move(buckets)});
  }
  for (const auto& sample : drain.samples) {
    if (sample.count == 0) continue;
    Fold fold = fold_sample(sample.key, drain, symbols);
    count_drop(fold.drop, sample.count);
    SampleDelta delta{fold.site.callsite, syscall_label(sample.key.syscall_nr, fold.site),
                      fold.site.step.empty() ? kEntryStep : fold.site.step, sample.count};
    // The fold's labels name the syscall of the first key with this stack; another syscall
    // through the same stack (rare) gets its own.
    LabelsPtr labels =
        fold.labels->syscall == delta.syscall
            ? fold.labels
            : stacks_.labels(delta.callsite, delta.syscall, delta.step, "", fold.copy);
    const auto [workload, kind] = workload_labels(labels, sample.key.cgroup_id, workloads);
    labels = stacks_.with_workload_and_task(labels, workload, kind, tasks_.comm(sample.key.comm),
                                            tasks_.pid(sample.key.tgid));
    delta.workload = labels->workload;
    delta.workload_kind = labels->workload_kind;
    CopyDelta copy{delta.callsite, delta.syscall, "", fold.copy, 0, sample.count};
    if (fold.stack.stack) {
      // Finished: the fold has its copy already (the common case, every drain).
      add_stack(out, fold.stack.stack, std::move(labels), kSamples, sample.count);
      if (!copy.copy.empty()) out.copies.push_back(std::move(copy));
    } else {
      Held held;
      held.stack = fold.stack;
      held.labels = std::move(labels);
      held.values[kSamples] = held.events = sample.count;
      held.copy = std::move(copy);
      offer(out, std::move(held), symbols);
    }
    out.samples.push_back(std::move(delta));
  }
  if (drain.sampling) {
    for (uint32_t c = 0; c < HUC_CTX_COUNT; ++c) {
      out.sampled_by_context[context_name(c)] += contexts_.update(c, drain.contexts[c]);
    }
    for (uint32_t r = 0; r < HUC_EXCLUDE_REASONS; ++r) {
      out.excluded_samples[exclude_reason_name(r)] += excluded_.update(r, drain.excluded[r]);
    }
    if (workloads) add_busy(out, drain, *workloads);
  }
  for (uint32_t r = 0; r < HUC_DROP_REASONS; ++r) {
    out.drops[drop_reason_name(r)] += drops_.update(r, drain.drops[r]);
  }
  out.missed = missed_.update(drain.misses);
  out.missed_coverage = missed_coverage(drain.misses);
  if (drain.rescued_checks) out.rescued_checks = rescued_.update(0, *drain.rescued_checks);
  // Every skipped run is also a drop of its own reason, whatever it would have counted.
  for (const auto& [key, n] : out.missed) out.drops[key.second] += n;
  if (drain.probes) {
    for (uint32_t w = 0; w < HUC_WALK_KINDS; ++w) {
      out.helper_walks[helper_walk_name(w)] += helper_walks_.update(w, drain.helper_walks[w]);
    }
  }
  // Every user-space reason exists from the first interval on, so rate() has a zero to start.
  for (const char* reason :
       {kDropSymbolUnresolved, kDropStackTruncated, kDropStackMissing, kDropProfileStackLimit}) {
    out.drops[reason] += 0;
  }
  forget_unused();
  return out;
}

}  // namespace hucprof
