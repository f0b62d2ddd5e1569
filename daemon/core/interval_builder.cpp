#include "core/interval_builder.h"

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
}

IntervalBuilder::SiteTuple IntervalBuilder::tuple_of(const huc_site_key& key) {
  return {key.caller, key.short_stack_id, key.syscall_nr, key.direction};
}

IntervalBuilder::Fold IntervalBuilder::fold_frames(const std::vector<uint64_t>& addrs,
                                                   Symbolizer& symbols) const {
  Fold out;
  std::vector<std::string> names;
  names.reserve(addrs.size());
  for (uint64_t addr : addrs) {
    auto name = symbols.name(addr);
    if (!name) {
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
    names.push_back(std::move(*name));
  }
  out.site = folder_.fold(names);
  if (out.site.callsite == kUnknownCallsite) out.drop = kDropSymbolUnresolved;
  if (out.site.truncated) out.drop = kDropStackTruncated;
  return out;
}

IntervalBuilder::Fold IntervalBuilder::fold_site(const huc_site_key& key, const RawDrain& drain,
                                                 Symbolizer& symbols) {
  auto tuple = tuple_of(key);
  if (auto it = site_folds_.find(tuple); it != site_folds_.end()) return it->second;
  Fold fold;
  if (key.short_stack_id >= 0) {
    auto stack = drain.short_stacks.find(key.short_stack_id);
    if (stack == drain.short_stacks.end()) {
      // Not cached: the stack may be readable next time.
      fold.site = {kUnknownCallsite, "none", "", false};
      fold.drop = kDropStackMissing;
      fold.site.syscall = syscall_label(key.syscall_nr, fold.site);
      fold.labels = site_labels(key, fold.site);
      return fold;
    }
    fold = fold_frames(stack->second, symbols);
  } else {
    fold = fold_frames({key.caller}, symbols);
  }
  fold.site.syscall = syscall_label(key.syscall_nr, fold.site);
  fold.labels = site_labels(key, fold.site);
  return site_folds_.emplace(tuple, std::move(fold)).first->second;
}

IntervalBuilder::Fold IntervalBuilder::fold_sample(const huc_sample_key& key, const RawDrain& drain,
                                                   Symbolizer& symbols) {
  if (auto it = sample_folds_.find(key.stack_id); it != sample_folds_.end()) {
    return it->second;
  }
  auto stack = drain.sample_stacks.find(key.stack_id);
  if (stack == drain.sample_stacks.end()) {
    Fold fold;
    fold.site = {kUnknownCallsite, "none", "", false};
    fold.drop = kDropStackMissing;
    fold.stack = stacks_.sampled({}, symbols);
    fold.labels = sample_labels(key, fold.site);
    return fold;
  }
  Fold fold = fold_frames(stack->second, symbols);
  fold.stack = stacks_.sampled(stack->second, symbols);
  fold.labels = sample_labels(key, fold.site);
  return sample_folds_.emplace(key.stack_id, std::move(fold)).first->second;
}

LabelsPtr IntervalBuilder::site_labels(const huc_site_key& key, const FoldedCallsite& site) {
  return stacks_.labels(site.callsite, site.syscall, "", direction_name(key.direction));
}

LabelsPtr IntervalBuilder::sample_labels(const huc_sample_key& key, const FoldedCallsite& site) {
  return stacks_.labels(site.callsite, syscall_label(key.syscall_nr, site),
                        site.check.empty() ? "object" : site.check, "");
}

StackPtr IntervalBuilder::site_stack(const huc_site_key& key, std::optional<int32_t> full_stack_id,
                                     const RawDrain& drain, Symbolizer& symbols) {
  const SiteTuple tuple = tuple_of(key);
  if (auto it = site_stacks_.find(tuple); it != site_stacks_.end()) return it->second;
  if (full_stack_id && *full_stack_id >= 0) {
    if (auto full = drain.full_stacks.find(*full_stack_id); full != drain.full_stacks.end()) {
      return site_stacks_.emplace(tuple, stacks_.probed(full->second, symbols)).first->second;
    }
  }
  StackPtr stack;
  if (key.short_stack_id >= 0) {
    if (auto frames = drain.short_stacks.find(key.short_stack_id);
        frames != drain.short_stacks.end()) {
      stack = stacks_.probed(frames->second, symbols);
    }
  }
  if (!stack) stack = stacks_.probed(key.caller ? StackFrames{key.caller} : StackFrames{}, symbols);
  // A key without a full stack never gets one (it is captured when the key is created): keep
  // what it has. A full stack not read yet, or a key not seen in this drain's sites, may still
  // come.
  if (full_stack_id == -1) site_stacks_.emplace(tuple, stack);
  return stack;
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

IntervalDeltas IntervalBuilder::build(const RawDrain& drain, Symbolizer& symbols) {
  IntervalDeltas out;
  out.stacks.reserve(drain.sites.size() + drain.subchecks.size() + drain.samples.size());
  auto count_drop = [&](const char* reason, uint64_t n) {
    if (reason) out.drops[reason] += n;
  };

  for (const auto& site : drain.sites) {
    auto tuple = tuple_of(site.key);
    uint64_t calls = site_calls_.update(tuple, site.calls);
    uint64_t bytes = site_bytes_.update(tuple, site.bytes);
    if (calls == 0 && bytes == 0) continue;
    Fold fold = fold_site(site.key, drain, symbols);
    count_drop(fold.drop, calls);
    const char* direction = direction_name(site.key.direction);
    out.checks.push_back({fold.site.callsite, fold.site.syscall, direction, calls, bytes});
    add_stack(out, site_stack(site.key, site.full_stack_id, drain, symbols), fold.labels, kCalls,
              calls);
    out.stacks.back().values[kBytes] = bytes;
  }
  for (const auto& sub : drain.subchecks) {
    uint64_t n = subchecks_.update({tuple_of(sub.key.site), sub.key.kind}, sub.count);
    if (n == 0) continue;
    Fold fold = fold_site(sub.key.site, drain, symbols);
    count_drop(fold.drop, n);
    out.subchecks.push_back({fold.site.callsite, check_kind_name(sub.key.kind), n});
    StackPtr stack =
        stacks_.with_subcheck(site_stack(sub.key.site, std::nullopt, drain, symbols), sub.key.kind);
    add_stack(out, stack,
              stacks_.labels(fold.site.callsite, fold.site.syscall, check_kind_name(sub.key.kind),
                             direction_name(sub.key.site.direction)),
              kSubchecks, n);
  }
  std::map<std::string, std::vector<uint64_t>> latency_by_site;
  for (const auto& lat : drain.latency) {
    uint64_t n = latency_.update({tuple_of(lat.key.site), lat.key.slot}, lat.count);
    if (n == 0 || lat.key.slot >= HUC_LATENCY_SLOTS) continue;
    Fold fold = fold_site(lat.key.site, drain, symbols);
    count_drop(fold.drop, n);
    auto& buckets = latency_by_site[fold.site.callsite];
    buckets.resize(HUC_LATENCY_SLOTS);
    buckets[lat.key.slot] += n;
    // Not counted twice as a drop: the calls of this key were.
    out.stacks.push_back({site_stack(lat.key.site, std::nullopt, drain, symbols), fold.labels, {}});
    out.stacks.back().values[kLatencyNs] = n * latency_slot_midpoint_ns(lat.key.slot);
  }
  for (auto& [callsite, buckets] : latency_by_site) {
    out.latency.push_back({callsite, std::move(buckets)});
  }
  for (const auto& sample : drain.samples) {
    uint64_t n = samples_.update({sample.key.stack_id, sample.key.syscall_nr}, sample.count);
    if (n == 0) continue;
    Fold fold = fold_sample(sample.key, drain, symbols);
    count_drop(fold.drop, n);
    SampleDelta delta{fold.site.callsite, syscall_label(sample.key.syscall_nr, fold.site),
                      fold.site.check.empty() ? "object" : fold.site.check, n};
    // The fold's labels name the syscall of the first key with this stack; another syscall
    // through the same stack (rare) gets its own.
    LabelsPtr labels = fold.labels->syscall == delta.syscall
                           ? fold.labels
                           : stacks_.labels(delta.callsite, delta.syscall, delta.check, "");
    add_stack(out, fold.stack, std::move(labels), kSamples, n);
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
  return out;
}

}  // namespace hucprof
