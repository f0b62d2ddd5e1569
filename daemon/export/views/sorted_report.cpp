#include "export/views/sorted_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/base/as_double.h"
#include "core/base/quoted_value.h"
#include "core/cost/share_difference.h"
#include "core/cost/usercopy_cost.h"
#include "export/views/report_text.h"

namespace hucprof {

namespace {

std::vector<TextColumn> key_columns(const std::vector<SortKey>& keys) {
  std::vector<TextColumn> out;
  for (SortKey k : keys) out.push_back({std::string(sort_key_name(k))});
  return out;
}

void add_key_cells(const std::vector<std::string>& key, std::vector<std::string>& cells) {
  for (const std::string& value : key) cells.push_back(value.empty() ? "-" : printable_name(value));
}

std::string headline_lines(const StackProfile& profile, const UsercopyCost& cost) {
  std::string out = report_header(profile);
  if (auto line = headline(cost, headline_estimate(cost),
                           "over the profile's " + format_seconds(cost.window_seconds))) {
    out += "\n" + line->line() + "\n";
  }
  return out;
}

std::string hidden_line(size_t hidden, double share, double percent) {
  if (hidden == 0) return "";
  char limit[32];
  std::snprintf(limit, sizeof(limit), "%g", percent);
  return "  (" + std::to_string(hidden) + (hidden == 1 ? " row" : " rows") + " below " + limit +
         " % hidden, " + format_percent(share) + " together)\n";
}

// "+1.23 pp": a change of share in percentage points, signed.
std::string points(double change) { return format_points(change) + " pp"; }

std::string points_interval(const ShareInterval& i) {
  return format_points(i.lower) + " to " + format_points(i.upper);
}

}  // namespace

std::string render_sorted_report(const StackProfile& profile, const std::vector<SortKey>& keys,
                                 std::optional<double> percent_limit) {
  const UsercopyCost cost = summarize_cost(profile, 0);
  std::string out = headline_lines(profile, cost) + "\n";
  std::vector<KeyedRow> rows = rows_by_keys(profile, keys);
  const bool sampling = profile.sampling;
  uint64_t total = sampling ? cost.busy_samples() : 0;
  if (!sampling) {
    for (const KeyedRow& r : rows) total += r.calls;
  }
  LimitedRows limited =
      apply_percent_limit(std::move(rows), sampling, total, percent_limit.value_or(0.0));
  if (limited.shown.empty() && limited.hidden == 0) {
    return out + "no usercopy check was seen in this profile\n";
  }
  std::vector<TextColumn> columns;
  if (sampling) columns.insert(columns.end(), {{"share", true}, {"samples", true}});
  if (profile.probes) columns.insert(columns.end(), {{"calls", true}, {"bytes", true}});
  for (TextColumn& c : key_columns(keys)) columns.push_back(std::move(c));
  std::vector<std::vector<std::string>> cells;
  for (const KeyedRow& r : limited.shown) {
    std::vector<std::string> row;
    if (sampling) {
      // A row of probes' calls only (no sample in it) has no share of CPU to give.
      row.push_back(r.samples == 0 && r.calls > 0
                        ? "-"
                        : format_percent_pm(as_double(r.samples), as_double(total)));
      row.push_back(format_count_exact(r.samples));
    }
    if (profile.probes) {
      row.push_back(format_count(r.calls));
      row.push_back(format_bytes(r.bytes));
    }
    add_key_cells(r.key, row);
    cells.push_back(std::move(row));
  }
  std::string keys_text;
  for (SortKey k : keys)
    keys_text += (keys_text.empty() ? "" : ",") + std::string(sort_key_name(k));
  out +=
      "the checks by " + keys_text +
      (sampling ? " (share: of busy CPU, ± its 95 % interval)" : " (share: of the checks' calls)") +
      "\n";
  if (!sampling) {
    // No CPU to share: the calls' part of all calls, exact.
    columns.insert(columns.begin(), TextColumn{"share", true});
    for (size_t i = 0; i < cells.size(); ++i) {
      cells[i].insert(
          cells[i].begin(),
          format_percent(total ? as_double(limited.shown[i].calls) / as_double(total) : 0.0));
    }
  }
  out += render_table(columns, cells);
  out += hidden_line(limited.hidden, total ? as_double(limited.hidden_rank) / as_double(total) : 0,
                     percent_limit.value_or(0.0));
  return out;
}

std::string render_diff_report(const StackProfile& base, const std::string& base_name,
                               const StackProfile& current, const std::string& current_name,
                               const std::vector<SortKey>& keys,
                               std::optional<double> percent_limit) {
  const UsercopyCost base_cost = summarize_cost(base, 0);
  const UsercopyCost current_cost = summarize_cost(current, 0);
  const double base_n = as_double(base_cost.busy_samples());
  const double current_n = as_double(current_cost.busy_samples());
  std::map<std::vector<std::string>, std::pair<uint64_t, uint64_t>> samples;  // base, current
  for (const KeyedRow& r : rows_by_keys(base, keys)) samples[r.key].first += r.samples;
  for (const KeyedRow& r : rows_by_keys(current, keys)) samples[r.key].second += r.samples;

  struct Row {
    std::vector<std::string> key;
    uint64_t base = 0, current = 0;
    ShareChange change;
  };
  std::vector<Row> rows;
  size_t hidden = 0;
  double hidden_base = 0, hidden_current = 0;
  const double limit = percent_limit.value_or(0.0) / 100.0;
  for (const auto& [key, counts] : samples) {
    const ShareChange c =
        share_change(as_double(counts.first), base_n, as_double(counts.second), current_n);
    if (c.base < limit && c.current < limit) {
      ++hidden;
      hidden_base += c.base;
      hidden_current += c.current;
      continue;
    }
    rows.push_back({key, counts.first, counts.second, c});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::fabs(a.change.change) > std::fabs(b.change.change);
  });

  std::string out = "base: " + printable_name(base_name) + "\n" + headline_lines(base, base_cost) +
                    "\ncurrent: " + printable_name(current_name) + "\n" +
                    headline_lines(current, current_cost) + "\n";
  const ShareChange all = share_change(as_double(base_cost.check_samples), base_n,
                                       as_double(current_cost.check_samples), current_n);
  out += "in the checks: " + format_share(all.base) + " -> " + format_share(all.current) +
         " of busy CPU, " + points(all.change) + " (95 % interval " +
         points_interval(all.interval) + ")" +
         (all.beyond_noise() ? ", beyond noise" : ", within noise") + "\n\n";
  out +=
      "change of each share of busy CPU, current - base, in percentage points (pp), with its\n"
      "95 % interval (Newcombe's hybrid score interval from the two Wilson intervals);\n"
      "*: the interval excludes 0, a change beyond sampling noise\n";
  if (rows.empty() && hidden == 0) return out + "no usercopy check was seen in either profile\n";
  std::vector<TextColumn> columns{
      {"base", true}, {"current", true}, {"change", true}, {"95 % interval", true}, {""}};
  for (TextColumn& c : key_columns(keys)) columns.push_back(std::move(c));
  std::vector<std::vector<std::string>> cells;
  for (const Row& r : rows) {
    std::vector<std::string> row{format_percent(r.change.base), format_percent(r.change.current),
                                 points(r.change.change), points_interval(r.change.interval),
                                 r.change.beyond_noise() ? "*" : ""};
    add_key_cells(r.key, row);
    cells.push_back(std::move(row));
  }
  out += render_table(columns, cells);
  if (hidden) {
    char limit_text[32];
    std::snprintf(limit_text, sizeof(limit_text), "%g", percent_limit.value_or(0.0));
    out += "  (" + std::to_string(hidden) + (hidden == 1 ? " row" : " rows") + " below " +
           limit_text + " % in both hidden, " + format_percent(hidden_base) + " in base and " +
           format_percent(hidden_current) + " in current together)\n";
  }
  return out;
}

}  // namespace hucprof
