#include "core/interval_builder.h"

#include "core/copy_path.h"
#include "core/latency_slots.h"

namespace hucprof {

namespace {
constexpr const char* kUnknownCallsite = "[unknown]";

const char* direction_name(uint8_t direction) {
  return direction == HUC_DIR_TO_USER ? "to_user" : "from_user";
}
}  // namespace

IntervalBuilder::IntervalBuilder(CallsiteFolder folder)
    : folder_(std::move(folder)), stacks_(folder_.rules()) {}

void IntervalBuilder::invalidate_folds() {
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
  if (const Fold* cached = sample_folds_.find(key.stack_id, drain_)) return *cached;
  auto stack = drain.sample_stacks.find(key.stack_id);
  if (stack == drain.sample_stacks.end()) {
    Fold fold;
    fold.site = {kUnknownCallsite, "none", "", false};
    fold.drop = kDropStackMissing;
    fold.stack = stacks_.sampled({}, symbols);
    fold.copy = copy_label(*fold.stack, symbols);
    fold.labels = stacks_.with_copy(sample_labels(key, fold.site), fold.copy);
    return fold;
  }
  // Resolved once for both: the call site's fold and the profile stack. The leaf is the
  // sampled instruction, not a return address.
  ResolvedStack frames = resolve_stack(stack->second, symbols, true);
  Fold fold = fold_frames(frames);
  fold.stack = stacks_.sampled(std::move(frames));
  fold.copy = copy_label(*fold.stack, symbols);
  fold.labels = stacks_.with_copy(sample_labels(key, fold.site), fold.copy);
  return sample_folds_.put(key.stack_id, std::move(fold), drain_);
}

StackPtr IntervalBuilder::own_stack(const huc_site_key& key, const RawDrain& drain,
                                    Symbolizer& symbols, bool& complete) {
  complete = true;
  if (key.short_stack_id == 0) {
    return stacks_.probed(key.caller ? StackFrames{key.caller} : StackFrames{}, symbols);
  }
  auto frames = drain.short_stacks.find(key.short_stack_id);
  complete = frames != drain.short_stacks.end();
  return stacks_.probed(complete ? frames->second : StackFrames{}, symbols);
}

StackPtr IntervalBuilder::site_stack(const RawSiteCount& site, const RawDrain& drain,
                                     Symbolizer& symbols) {
  const SiteTuple tuple = tuple_of(site.key);
  StackPtr stack;
  if (site.full_stack_id != 0) {
    if (const StackPtr* cached = full_stacks_.find(site.full_stack_id, drain_)) {
      stack = *cached;
    } else if (auto full = drain.full_stacks.find(site.full_stack_id);
               full != drain.full_stacks.end()) {
      stack = full_stacks_.put(site.full_stack_id, stacks_.probed(full->second, symbols), drain_);
    }
  }
  if (!stack) {
    // No full stack this time (the stack map was full): the call site's recent one is a better
    // guess than the key's short stack, which stops at the call site.
    if (const StackPtr* seen = site_stacks_.find(tuple, drain_)) return *seen;
    bool complete = false;
    stack = own_stack(site.key, drain, symbols, complete);
    if (!complete) return stack;  // not kept: a later drain may have the short stack
  }
  return site_stacks_.put(tuple, std::move(stack), drain_);
}

StackPtr IntervalBuilder::key_stack(const huc_site_key& key, const RawDrain& drain,
                                    Symbolizer& symbols) {
  if (const StackPtr* seen = site_stacks_.find(tuple_of(key), drain_)) return *seen;
  bool complete = false;
  return own_stack(key, drain, symbols, complete);
}

LabelsPtr IntervalBuilder::site_labels(const huc_site_key& key, const FoldedCallsite& site) {
  return stacks_.labels(site.callsite, site.syscall, "", direction_name(key.direction));
}

LabelsPtr IntervalBuilder::sample_labels(const huc_sample_key& key, const FoldedCallsite& site) {
  return stacks_.labels(site.callsite, syscall_label(key.syscall_nr, site),
                        site.check.empty() ? "object" : site.check, "");
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
}

IntervalDeltas IntervalBuilder::build(const RawDrain& drain, Symbolizer& symbols) {
  ++drain_;
  IntervalDeltas out;
  out.stacks.reserve(drain.sites.size() + drain.subchecks.size() + drain.latency.size() +
                     drain.samples.size());
  auto count_drop = [&](const char* reason, uint64_t n) {
    if (reason) out.drops[reason] += n;
  };

  // Sites first: their folds and stacks serve the sub-check and timing keys of the same call
  // sites.
  for (const auto& site : drain.sites) {
    if (site.calls == 0 && site.bytes == 0) continue;
    Fold fold = fold_site(site.key, drain, symbols);
    count_drop(fold.drop, site.calls);
    StackPtr stack = site_stack(site, drain, symbols);
    std::string copy = copy_label(*stack, symbols);
    out.checks.push_back({fold.site.callsite, fold.site.syscall, direction_name(site.key.direction),
                          site.calls, site.bytes, copy});
    add_stack(out, std::move(stack), stacks_.with_copy(fold.labels, copy), kCalls, site.calls);
    out.stacks.back().values[kBytes] = site.bytes;
  }
  for (const auto& sub : drain.subchecks) {
    if (sub.count == 0) continue;
    Fold fold = fold_site(sub.key.site, drain, symbols);
    count_drop(fold.drop, sub.count);
    out.subchecks.push_back({fold.site.callsite, check_kind_name(sub.key.kind), sub.count});
    const StackPtr checked = key_stack(sub.key.site, drain, symbols);
    add_stack(out, stacks_.with_subcheck(checked, sub.key.kind),
              stacks_.labels(fold.site.callsite, fold.site.syscall, check_kind_name(sub.key.kind),
                             direction_name(sub.key.site.direction), copy_label(*checked, symbols)),
              kSubchecks, sub.count);
  }
  std::map<std::string, std::vector<uint64_t>> latency_by_site;
  for (const auto& lat : drain.latency) {
    if (lat.count == 0 || lat.key.slot >= HUC_LATENCY_SLOTS) continue;
    Fold fold = fold_site(lat.key.site, drain, symbols);
    count_drop(fold.drop, lat.count);
    auto& buckets = latency_by_site[fold.site.callsite];
    buckets.resize(HUC_LATENCY_SLOTS);
    buckets[lat.key.slot] += lat.count;
    // Not counted twice as a drop: the calls of this key were.
    StackPtr timed = key_stack(lat.key.site, drain, symbols);
    LabelsPtr labels = stacks_.with_copy(fold.labels, copy_label(*timed, symbols));
    out.stacks.push_back({std::move(timed), std::move(labels), {}});
    out.stacks.back().values[kLatencyNs] = lat.count * latency_slot_midpoint_ns(lat.key.slot);
  }
  for (auto& [callsite, buckets] : latency_by_site) {
    out.latency.push_back({callsite, std::move(buckets)});
  }
  for (const auto& sample : drain.samples) {
    if (sample.count == 0) continue;
    Fold fold = fold_sample(sample.key, drain, symbols);
    count_drop(fold.drop, sample.count);
    SampleDelta delta{fold.site.callsite, syscall_label(sample.key.syscall_nr, fold.site),
                      fold.site.check.empty() ? "object" : fold.site.check, sample.count,
                      fold.copy};
    // The fold's labels name the syscall of the first key with this stack; another syscall
    // through the same stack (rare) gets its own.
    LabelsPtr labels =
        fold.labels->syscall == delta.syscall
            ? fold.labels
            : stacks_.labels(delta.callsite, delta.syscall, delta.check, "", fold.copy);
    add_stack(out, fold.stack, std::move(labels), kSamples, sample.count);
    out.samples.push_back(std::move(delta));
  }
  if (drain.sampling) {
    for (uint32_t c = 0; c < HUC_CTX_COUNT; ++c) {
      out.sampled_by_context[context_name(c)] += contexts_.update(c, drain.contexts[c]);
    }
  }
  for (uint32_t r = 0; r < HUC_DROP_REASONS; ++r) {
    out.drops[drop_reason_name(r)] += drops_.update(r, drain.drops[r]);
  }
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
