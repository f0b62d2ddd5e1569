#include "core/profile/top_model.h"

#include <algorithm>
#include <set>

namespace hucprof {
namespace {

using RowKey = std::pair<std::string, std::string>;

// Batches kept for a share since start: enough for the design effect (kMinBatches and more),
// few enough that a long session holds a bounded history (pairs merge when it is full, as
// DrainWindow thins its points).
constexpr size_t kMaxBatches = 64;

void thin(std::vector<Batch>& batches) {
  if (batches.size() < kMaxBatches) return;
  std::vector<Batch> merged;
  for (size_t i = 0; i + 1 < batches.size(); i += 2) {
    merged.push_back({batches[i].k + batches[i + 1].k, batches[i].n + batches[i + 1].n});
  }
  if (batches.size() % 2 != 0) merged.push_back(batches.back());
  batches = std::move(merged);
}

uint64_t sum_of(const std::map<std::string, uint64_t>& counts) {
  uint64_t total = 0;
  for (const auto& [unused, n] : counts) total += n;
  return total;
}

uint64_t busy_of(const std::map<std::string, uint64_t>& contexts) {
  uint64_t busy = 0;
  for (const char* context : {"kernel", "user"}) {
    if (const auto it = contexts.find(context); it != contexts.end()) busy += it->second;
  }
  return busy;
}

// Whether any counter of `now` is below its last value: the source counts from zero again.
template <class Map, class Less>
bool any_went_back(const Map& last, const Map& now, Less less) {
  for (const auto& [key, value] : now) {
    const auto before = last.find(key);
    if (before != last.end() && less(value, before->second)) return true;
  }
  return false;
}

// Absent series keep their value.
template <class Map>
void update(Map& last, const Map& now) {
  for (const auto& [key, value] : now) last[key] = value;
}

}  // namespace

TopModel::Counters TopModel::counters_of(const hucprof::v1::Snapshot& snapshot) {
  Counters out;
  for (const auto& s : snapshot.cpu_samples()) {
    out.samples[{s.callsite(), s.syscall(), s.step()}] += s.samples();
  }
  for (const auto& s : snapshot.sampled()) out.contexts[s.context()] += s.samples();
  for (const auto& s : snapshot.checks()) {
    auto& [calls, bytes] = out.checks[{s.callsite(), s.syscall(), s.direction()}];
    calls += s.calls();
    bytes += s.bytes();
  }
  return out;
}

TopModel::Observed TopModel::observe(double at, const hucprof::v1::Snapshot& snapshot) {
  Counters now = counters_of(snapshot);
  sample_frequency_hz_ = snapshot.sample_frequency_hz();
  sampling_ = sample_frequency_hz_ > 0 || !now.contexts.empty();
  probes_ = !now.checks.empty() ||
            std::any_of(snapshot.probes().begin(), snapshot.probes().end(), [](const auto& p) {
              return p.attached() && (p.mode() == "fentry" || p.mode() == "kprobe");
            });
  hardened_ = snapshot.hardened_usercopy_enabled();

  const uint64_t intervals = snapshot.intervals();
  // A source that says how many drains it made (0: it does not) and made none since.
  if (last_at_ && intervals != 0 && intervals == last_intervals_) return Observed::Unchanged;
  last_intervals_ = intervals;
  if (!last_at_ || !aligned_) {
    // The first reading of a source on its own clock is no drain's moment, the next new drain
    // is: count from there.
    aligned_ = readings_are_drains_ || last_at_.has_value();
    last_ = std::move(now);
    last_at_ = at;
    return Observed::First;
  }
  const auto less = [](uint64_t a, uint64_t b) { return a < b; };
  const auto fewer = [](const std::pair<uint64_t, uint64_t>& a,
                        const std::pair<uint64_t, uint64_t>& b) {
    return a.first < b.first || a.second < b.second;
  };
  if (any_went_back(last_.samples, now.samples, less) ||
      any_went_back(last_.contexts, now.contexts, less) ||
      any_went_back(last_.checks, now.checks, fewer)) {
    // A restarted daemon: what it counted before is gone, and the span since it started is
    // unknown here, so nothing of this reading is an interval.
    last_ = std::move(now);
    last_at_ = at;
    aligned_ = readings_are_drains_;
    interval_.reset();
    since_start_.reset();
    return Observed::WentBack;
  }

  Span span;
  span.seconds = at - *last_at_;
  for (const auto& [key, value] : now.samples) {
    const auto before = last_.samples.find(key);
    const uint64_t increase = value - (before == last_.samples.end() ? 0 : before->second);
    if (increase > 0) {
      span.steps[{std::get<0>(key), std::get<1>(key)}][std::get<2>(key)] += increase;
    }
  }
  for (const auto& [context, value] : now.contexts) {
    const auto before = last_.contexts.find(context);
    span.contexts[context] = value - (before == last_.contexts.end() ? 0 : before->second);
  }
  for (const auto& [key, value] : now.checks) {
    const auto before = last_.checks.find(key);
    const auto was =
        before == last_.checks.end() ? std::pair<uint64_t, uint64_t>{} : before->second;
    if (value == was) continue;
    auto& [calls, bytes] = span.checks[{std::get<0>(key), std::get<1>(key)}];
    calls += value.first - was.first;
    bytes += value.second - was.second;
  }
  const double busy = static_cast<double>(busy_of(span.contexts));
  double in_checks = 0;
  for (const auto& [row, steps] : span.steps) {
    const double k = static_cast<double>(sum_of(steps));
    in_checks += k;
    span.row_batches[row] = {{k, busy}};
  }
  span.batches = {{in_checks, busy}};
  update(last_.samples, now.samples);
  update(last_.contexts, now.contexts);
  update(last_.checks, now.checks);
  last_at_ = at;

  if (!since_start_) {
    since_start_ = span;
  } else {
    Span& total = *since_start_;
    total.seconds += span.seconds;
    for (const auto& [context, n] : span.contexts) total.contexts[context] += n;
    for (const auto& [row, steps] : span.steps) {
      for (const auto& [step, n] : steps) total.steps[row][step] += n;
    }
    for (const auto& [row, counts] : span.checks) {
      total.checks[row].first += counts.first;
      total.checks[row].second += counts.second;
    }
    // Every row has a batch per interval, as the total: none in the checks where it had none.
    for (const auto& [row, unused] : span.row_batches) {
      if (total.row_batches.count(row) == 0) {
        auto& batches = total.row_batches[row];
        for (const Batch& b : total.batches) batches.push_back({0, b.n});
      }
    }
    total.batches.push_back(span.batches.front());
    thin(total.batches);
    for (auto& [row, batches] : total.row_batches) {
      const auto it = span.row_batches.find(row);
      batches.push_back(it == span.row_batches.end() ? Batch{0, busy} : it->second.front());
      thin(batches);
    }
  }
  interval_ = std::move(span);
  return Observed::Counted;
}

std::optional<TopView> TopModel::view(bool cumulative) const {
  const std::optional<Span>& span = cumulative ? since_start_ : interval_;
  if (!span) return std::nullopt;
  return render(*span, cumulative);
}

TopView TopModel::render(const Span& span, bool cumulative) const {
  TopView view;
  view.cumulative = cumulative;
  view.seconds = span.seconds;
  view.sampling = sampling_;
  view.probes = probes_;
  view.sample_frequency_hz = sample_frequency_hz_;
  view.hardened_usercopy_enabled = hardened_;
  const auto context = [&](const char* name) {
    const auto it = span.contexts.find(name);
    return it == span.contexts.end() ? uint64_t{0} : it->second;
  };
  view.kernel = context("kernel");
  view.user = context("user");
  view.idle = context("idle");
  const double busy = static_cast<double>(view.kernel + view.user);

  std::set<RowKey> keys;
  for (const auto& [row, unused] : span.steps) keys.insert(row);
  for (const auto& [row, unused] : span.checks) keys.insert(row);
  uint64_t in_checks = 0;
  for (const RowKey& key : keys) {
    TopRow row;
    row.callsite = key.first;
    row.syscall = key.second;
    if (const auto steps = span.steps.find(key); steps != span.steps.end()) {
      row.steps.assign(steps->second.begin(), steps->second.end());
      std::stable_sort(row.steps.begin(), row.steps.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      row.samples = sum_of(steps->second);
    }
    if (const auto checks = span.checks.find(key); checks != span.checks.end()) {
      row.calls = checks->second.first;
      row.bytes = checks->second.second;
    }
    if (row.samples == 0 && row.calls == 0 && row.bytes == 0) continue;
    in_checks += row.samples;
    view.calls += row.calls;
    view.bytes += row.bytes;
    if (sampling_) {
      const auto batches = span.row_batches.find(key);
      const double d = batches == span.row_batches.end() ? 1 : design_effect(batches->second);
      row.share = estimate_share(static_cast<double>(row.samples), busy, 0, d);
    }
    view.rows.push_back(std::move(row));
  }
  if (sampling_) {
    view.total = estimate_share(static_cast<double>(in_checks), busy, span.seconds,
                                design_effect(span.batches));
  }
  for (TopRow& row : view.rows) row.answered = row.share.decided && view.total.decided;
  std::sort(view.rows.begin(), view.rows.end(), [](const TopRow& a, const TopRow& b) {
    return std::tie(b.samples, b.calls, b.bytes, a.callsite, a.syscall) <
           std::tie(a.samples, a.calls, a.bytes, b.callsite, b.syscall);
  });
  return view;
}

}  // namespace hucprof
