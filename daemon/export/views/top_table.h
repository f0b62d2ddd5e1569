#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile/top_model.h"

namespace hucprof {

// What `hucprof top` prints around the model's view.
struct TopFrame {
  std::string source;  // "http://127.0.0.1:9478/metrics", "this kernel (sampling at 99 Hz)"
  std::string time;    // of the last reading, "2026-12-06 05:36:16 UTC"
  double delay_seconds = 1;
  std::optional<TopView> view;  // nullopt: waiting for a second drain
  std::string status;           // the last error or a note; one line, any bytes (escaped here)
  bool terminal = false;        // the hints name keys (c) rather than flags (-S)
};

// A terminal's screen: at most `height` lines of at most `width` columns each, names cut with
// "…"; the rows that do not fit are counted on the last line. `header` is the line of column
// names (the terminal shows it in reverse video).
struct TopScreen {
  std::vector<std::string> lines;
  std::optional<size_t> header;
};
TopScreen top_screen(const TopFrame& frame, size_t width, size_t height);

// One plain table for a pipe or a file: every row, no name cut, no escape sequence, ending in
// an empty line.
std::string top_table(const TopFrame& frame);

// Columns `text` takes on a terminal, counted so that it never takes more than said: every
// character from U+1100 on counts two (the East Asian wide ones do) but the punctuation of
// U+2000..U+206F ("–", "…"), every other one.
size_t terminal_columns(std::string_view text);
// `text` cut to at most `columns` (>= 1) columns, ending in "…" when cut.
std::string fit_to_columns(std::string_view text, size_t columns);

}  // namespace hucprof
