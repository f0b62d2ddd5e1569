#include "export/views/top_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/base/quoted_value.h"
#include "core/base/utf8.h"
#include "export/views/report_text.h"

namespace hucprof {
namespace {

// A name from outside (a daemon's label, a kernel symbol, an error text) as a terminal may
// show it: printable, and no longer than a DWARF name may be.
constexpr size_t kMaxNameBytes = 512;
std::string shown(std::string_view name) { return printable_text(name, kMaxNameBytes); }

std::string formatted(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

// A percentage's number as the report writes it: "0.45", "1.4", "<0.01".
std::string percent_number(double fraction) {
  const double pct = 100.0 * fraction;
  if (pct > 0 && pct < 0.01) return "<0.01";
  return formatted(pct < 1 ? "%.2f" : "%.1f", pct);
}

std::string interval_text(const ShareInterval& interval) {
  return percent_number(interval.lower) + "–" + percent_number(interval.upper) + " %";
}

std::string seconds_text(double seconds) { return formatted("%.1f s", seconds); }

// "in the last 1.0 s", "since start (12.3 s)".
std::string span_name(const TopView& view) {
  return view.cumulative ? "since start (" + seconds_text(view.seconds) + ")"
                         : "in the last " + seconds_text(view.seconds);
}

std::string title(const TopFrame& frame) {
  std::string out =
      "hucprof top  " + shown(frame.source) + "  every " + seconds_text(frame.delay_seconds);
  if (!frame.time.empty()) out += "  " + frame.time;
  return out;
}

std::string busy_line(const TopView& view) {
  const uint64_t busy = view.kernel + view.user;
  std::string out = "busy CPU " + span_name(view) + ": " + format_count_exact(busy) +
                    " samples (kernel " + format_count_exact(view.kernel) + ", user " +
                    format_count_exact(view.user) + "; idle " + format_count_exact(view.idle) +
                    " left out)";
  if (view.sample_frequency_hz > 0 && view.seconds > 0) {
    // One cpu-clock sample stands for the kernel's timer period, 1e9 / Hz ns (docs/metrics.md).
    const double period = static_cast<double>(1'000'000'000 / view.sample_frequency_hz) / 1e9;
    out += ", " + formatted("%.2f", static_cast<double>(busy) * period / view.seconds) +
           " cores at " + std::to_string(view.sample_frequency_hz) + " Hz";
  }
  return out;
}

// The headline, or what it waits for: the verdict rule's words.
std::string headline(const TopView& view, bool terminal) {
  const ShareEstimate& total = view.total;
  const std::string k = format_count_exact(static_cast<uint64_t>(total.k));
  if (!(total.n > 0)) return "no busy CPU was sampled " + span_name(view);
  if (total.decided) {
    return percent_number(total.share) +
           " % of busy CPU is in the checks (95 %: " + interval_text(total.interval) + "): " + k +
           " of " + format_count_exact(static_cast<uint64_t>(total.n)) + " busy samples";
  }
  // The verdict rule's words; the interval is known while the share is not an answer yet.
  std::string out = "collecting: " + k + (total.k == 1 ? " sample" : " samples") +
                    " in the checks (95 %: " + interval_text(total.interval) + ")";
  if (!total.needed_span) return out;
  if (view.cumulative) {
    const double more = std::max(1.0, std::ceil(*total.needed_span - view.seconds));
    return out + ", about " + formatted("%.0f", more) + " more seconds at this rate";
  }
  return out + "; a verdict needs about " + formatted("%.0f", std::ceil(*total.needed_span)) +
         " s at this rate (" + (terminal ? "c" : "-S") + ": since start)";
}

std::string probe_line(const TopView& view) {
  return "probes " + span_name(view) + ": " + format_count_exact(view.calls) + " checks, " +
         format_bytes(view.bytes) + " (exact counts: no interval)";
}

std::string steps_text(const TopRow& row) {
  std::string out;
  for (const auto& [step, n] : row.steps) {
    if (!out.empty()) out += ", ";
    const double pct = 100.0 * static_cast<double>(n) / static_cast<double>(row.samples);
    out += shown(step) + " " + formatted("%.0f", pct) + "%";
  }
  return out;
}

struct Column {
  std::string name;
  bool numeric;
};

// The table as cells: one vector of cells per line, the column names first.
struct Table {
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;
};

Table table_of(const TopView& view) {
  Table t;
  if (view.sampling) {
    t.columns.insert(t.columns.end(),
                     {{"share", true}, {"95 % interval", true}, {"samples", true}});
  }
  if (view.probes) t.columns.insert(t.columns.end(), {{"checks", true}, {"bytes", true}});
  t.columns.insert(t.columns.end(), {{"call site", false}, {"syscall", false}});
  if (view.sampling) t.columns.push_back({"steps", false});
  for (const TopRow& row : view.rows) {
    std::vector<std::string> cells;
    if (view.sampling) {
      cells.push_back(row.answered ? percent_number(row.share.share) + " %" : "collecting");
      cells.push_back(interval_text(row.share.interval));
      cells.push_back(format_count_exact(row.samples));
    }
    if (view.probes) {
      cells.push_back(format_count_exact(row.calls));
      cells.push_back(format_bytes(row.bytes));
    }
    cells.push_back(shown(row.callsite));
    cells.push_back(shown(row.syscall));
    if (view.sampling) cells.push_back(steps_text(row));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

constexpr size_t kGap = 2;

// Widths: numbers as wide as their widest cell; on a terminal the names share what is left,
// the call site first, and the last column takes the rest (or is cut).
std::vector<size_t> widths_of(const Table& t, std::optional<size_t> terminal_width) {
  std::vector<size_t> widths;
  for (size_t c = 0; c < t.columns.size(); ++c) {
    size_t w = terminal_columns(t.columns[c].name);
    for (const auto& row : t.rows) w = std::max(w, terminal_columns(row[c]));
    widths.push_back(w);
  }
  if (!terminal_width) return widths;
  // The call site and the syscall are the two columns before the last (or the last two).
  const size_t last = t.columns.size() - 1;
  const size_t callsite = t.columns.back().name == "steps" ? last - 2 : last - 1;
  const size_t syscall = callsite + 1;
  size_t fixed = 0;
  for (size_t c = 0; c < callsite; ++c) fixed += widths[c] + kGap;
  widths[syscall] = std::min<size_t>(widths[syscall], 16);
  const size_t room = *terminal_width > fixed + widths[syscall] + kGap
                          ? *terminal_width - fixed - widths[syscall] - kGap
                          : 10;
  widths[callsite] =
      std::clamp<size_t>(std::min<size_t>(widths[callsite], 40), 9, std::max<size_t>(room, 9));
  return widths;
}

std::string pad_cell(const std::string& cell, size_t width, bool right) {
  const size_t used = terminal_columns(cell);
  if (used >= width) return cell;
  const std::string space(width - used, ' ');
  return right ? space + cell : cell + space;
}

std::string line_of(const Table& t, const std::vector<std::string>& cells,
                    const std::vector<size_t>& widths) {
  std::string out;
  for (size_t c = 0; c < cells.size(); ++c) {
    const bool last = c + 1 == cells.size();
    const std::string cell =
        terminal_columns(cells[c]) > widths[c] ? fit_to_columns(cells[c], widths[c]) : cells[c];
    out += last && !t.columns[c].numeric ? cell : pad_cell(cell, widths[c], t.columns[c].numeric);
    if (!last) out += std::string(kGap, ' ');
  }
  return out;
}

std::vector<std::string> header_lines(const TopFrame& frame) {
  std::vector<std::string> lines{title(frame)};
  if (!frame.view) {
    lines.push_back("waiting for the second drain to compare with (reading every " +
                    seconds_text(frame.delay_seconds) + "; a daemon drains every --interval)");
  } else {
    const TopView& view = *frame.view;
    if (!view.hardened_usercopy_enabled) {
      lines.push_back("the checks are off on this kernel: there is nothing for them to cost");
    }
    if (view.sampling) {
      lines.push_back(busy_line(view));
      lines.push_back(headline(view, frame.terminal));
    }
    if (view.probes) lines.push_back(probe_line(view));
    if (!view.sampling && !view.probes) lines.push_back("neither sampling nor probes are on");
  }
  if (!frame.status.empty()) lines.push_back(shown(frame.status));
  return lines;
}

}  // namespace

size_t terminal_columns(std::string_view text) {
  size_t columns = 0;
  while (!text.empty()) {
    const size_t length = std::max<size_t>(1, utf8_sequence_length(text));
    // Three or four bytes encode U+0800 and up. One column: U+0800..U+10FF (lead E0, or E1
    // 80..83), and the General Punctuation block U+2000..U+206F (E2 80..81: the dashes, quotes
    // and "…" this table prints, one column outside CJK terminals' legacy modes).
    const auto lead = static_cast<unsigned char>(text.front());
    const auto second = length >= 3 ? static_cast<unsigned char>(text[1]) : 0;
    const bool narrow = length < 3 || lead == 0xE0 || (lead == 0xE1 && second < 0x84) ||
                        (lead == 0xE2 && second <= 0x81);
    columns += narrow ? 1 : 2;
    text.remove_prefix(std::min(length, text.size()));
  }
  return columns;
}

std::string fit_to_columns(std::string_view text, size_t columns) {
  if (terminal_columns(text) <= columns) return std::string(text);
  std::string out;
  size_t used = 0;
  while (!text.empty()) {
    const size_t length = std::min(std::max<size_t>(1, utf8_sequence_length(text)), text.size());
    const std::string_view character = text.substr(0, length);
    const size_t width = terminal_columns(character);
    if (used + width + 1 > columns) break;  // 1: the "…"
    out += character;
    used += width;
    text.remove_prefix(length);
  }
  return out + "…";
}

TopScreen top_screen(const TopFrame& frame, size_t width, size_t height) {
  width = std::max<size_t>(width, 1);
  TopScreen screen;
  const auto add = [&](const std::string& line) {
    if (screen.lines.size() < height) screen.lines.push_back(fit_to_columns(line, width));
  };
  for (const std::string& line : header_lines(frame)) add(line);
  const std::string keys =
      "q quit  c " +
      std::string(frame.view && frame.view->cumulative ? "last interval" : "since start");
  if (frame.view && !frame.view->rows.empty() && screen.lines.size() + 3 <= height) {
    const Table t = table_of(*frame.view);
    const auto widths = widths_of(t, width);
    std::vector<std::string> names;
    for (const Column& c : t.columns) names.push_back(c.name);
    add("");
    screen.header = screen.lines.size();
    add(line_of(t, names, widths));
    // One line stays for the keys and what did not fit.
    const size_t room = height - screen.lines.size() - 1;
    const size_t shown_rows = std::min(room, t.rows.size());
    for (size_t i = 0; i < shown_rows; ++i) add(line_of(t, t.rows[i], widths));
    const size_t hidden = t.rows.size() - shown_rows;
    add(hidden > 0 ? keys + "  (" + std::to_string(hidden) + " more call sites below)" : keys);
  } else {
    if (frame.view && frame.view->rows.empty())
      add("no call site counted " + span_name(*frame.view));
    add(keys);
  }
  return screen;
}

std::string top_table(const TopFrame& frame) {
  std::string out;
  for (const std::string& line : header_lines(frame)) out += line + "\n";
  if (frame.view && !frame.view->rows.empty()) {
    const Table t = table_of(*frame.view);
    const auto widths = widths_of(t, std::nullopt);
    std::vector<std::string> names;
    for (const Column& c : t.columns) names.push_back(c.name);
    out += line_of(t, names, widths) + "\n";
    for (const auto& row : t.rows) out += line_of(t, row, widths) + "\n";
  } else if (frame.view) {
    out += "no call site counted " + span_name(*frame.view) + "\n";
  }
  return out + "\n";
}

}  // namespace hucprof
