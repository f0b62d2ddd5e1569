#include "export/views/flame_graph_svg.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "core/base/quoted_value.h"
#include "core/base/utf8.h"
#include "core/cost/share_interval.h"
#include "core/symbols/folding_rules.h"
#include "export/views/markup_escape.h"
#include "export/views/report_text.h"

namespace hucprof {

namespace {

constexpr int kFrameHeight = 17;
constexpr int kFontSize = 12;
constexpr double kCharWidth = 0.6 * kFontSize;  // monospace
constexpr int kPad = 10;
constexpr int kTop = 40;     // title
constexpr int kBottom = 44;  // legend
// Narrower frames (and what they hold) are not drawn: invisible anyway, and 10 000 of them made
// a 2.5 MB page.
constexpr double kMinFramePx = 0.5;
// An inlined call (from the kernel's debuginfo) is no frame of its own on the kernel stack: drawn
// paler, outlined with dashes, its name in italics.
constexpr const char* kInlinedRect =
    " fill-opacity=\"0.55\" stroke=\"#444\" stroke-width=\"0.8\" stroke-dasharray=\"3,2\"";

bool has_inlined(const FlameNode& node) {
  if (node.inlined) return true;
  for (const FlameNode& c : node.children) {
    if (has_inlined(c)) return true;
  }
  return false;
}

std::string fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

// Stable colours per name (a frame keeps its colour from one graph to the next).
std::string fill_for(const FlameNode& node) {
  const size_t h = std::hash<std::string>{}(node.name);
  const int a = static_cast<int>(h % 60), b = static_cast<int>((h >> 8) % 60);
  int r = 0, g = 0, bl = 0;
  switch (node.kind) {
    case FrameKind::Check:
      r = 70 + a / 2;
      g = 130 + b;
      bl = 225;
      break;
    case FrameKind::CopyHelper:
      r = 90 + a;
      g = 190 + b / 2;
      bl = 120 + a / 2;
      break;
    case FrameKind::Root:
      r = 200;
      g = 200;
      bl = 200;
      break;
    case FrameKind::Kernel:
      r = 205 + a / 2;
      g = 80 + 2 * b;
      bl = 40 + a / 3;
      break;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "rgb(%d,%d,%d)", r, g, bl);
  return buf;
}

class Renderer {
 public:
  // Frames are appended to `out`, the SVG being written: the frames, most of a large flame
  // graph, are never a string of their own to be copied into it (issue 40).
  Renderer(const FlameGraphStyle& style, uint64_t total, size_t depth, std::string& out)
      : out_(out),
        style_(style),
        total_(total),
        height_(kTop + static_cast<int>(depth) * kFrameHeight + kBottom),
        scale_(total ? (style.width - 2.0 * kPad) / static_cast<double>(total) : 0) {}

  int height() const { return height_; }

  void frame(const FlameNode& node, double x, size_t level) {
    const double w = static_cast<double>(node.value) * scale_;
    if (w < kMinFramePx) return;
    const double y = height_ - kBottom - static_cast<double>(level + 1) * kFrameHeight;
    out_ += std::string(node.inlined ? "<g class=\"inlined\">" : "<g>") + "<title>" + hover(node) +
            "</title><rect x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.0f", y) + "\" width=\"" +
            fmt("%.1f", std::max(w - 0.5, 0.1)) + "\" height=\"" +
            std::to_string(kFrameHeight - 1) + "\" rx=\"2\" fill=\"" + fill_for(node) + "\"" +
            (node.inlined ? kInlinedRect : "") + "/>";
    const std::string label = fitted(printable_name(node.name), w);
    if (!label.empty()) {
      out_ += "<text x=\"" + fmt("%.1f", x + 3) + "\" y=\"" + fmt("%.0f", y + kFrameHeight - 5) +
              "\"" + (node.inlined ? " font-style=\"italic\"" : "") + ">" + markup_escape(label) +
              "</text>";
    }
    out_ += "</g>\n";
    double child_x = x;
    for (const FlameNode& child : node.children) {
      frame(child, child_x, level + 1);
      child_x += static_cast<double>(child.value) * scale_;
    }
  }

 private:
  // Markup already: each name escaped (and bounded) on its own, so a long one cannot cut the
  // numbers after it.
  std::string hover(const FlameNode& node) const {
    std::string where;
    if (node.inlined) {
      where = " (inlined" + (node.source.empty() ? "" : ", " + markup_escape(node.source)) + ")";
    } else if (!node.source.empty()) {
      where = " (" + markup_escape(node.source) + ")";
    }
    // "1 sample", "2 samples": the unit is given in the plural.
    std::string unit = style_.unit;
    if (node.value == 1 && unit.ends_with('s')) unit.pop_back();
    std::string text = markup_escape(node.name) + where + ": " + std::to_string(node.value) + " " +
                       markup_escape(unit);
    if (style_.seconds_per_unit > 0) {
      text +=
          ", " + fmt("%.3f", static_cast<double>(node.value) * style_.seconds_per_unit) + " s CPU";
    }
    const double value = static_cast<double>(node.value), total = static_cast<double>(total_);
    text += " (" + fmt("%.2f", 100.0 * value / total) + " % of " + markup_escape(style_.whole);
    if (style_.intervals && node.value < total_) {  // the whole is the whole, not a share
      text += "; 95 % interval " + format_interval(estimate_share(value, total).interval);
    }
    return text + ")";
  }

  // As much of the (printable) name as fits, ".." marking a cut after a whole character;
  // nothing under three characters.
  static std::string fitted(const std::string& name, double width) {
    const auto fits = static_cast<size_t>(std::max(0.0, (width - 6) / kCharWidth));
    if (fits >= name.size()) return name;
    if (fits < 3) return "";
    size_t cut = 0;
    std::string_view rest = name;
    while (const size_t length = utf8_sequence_length(rest)) {
      if (cut + length > fits - 2) break;
      cut += length;
      rest.remove_prefix(length);
    }
    return name.substr(0, cut) + "..";
  }

  std::string& out_;
  const FlameGraphStyle& style_;
  uint64_t total_;
  int height_;
  double scale_;
};

void legend(std::string& out, int width, int height, bool inlined) {
  const int y = height - 14;
  int x = kPad;
  for (auto [kind, words] :
       {std::pair{FrameKind::Check, "usercopy check"},
        std::pair{FrameKind::CopyHelper, "copy helper"}, std::pair{FrameKind::Kernel, "kernel"}}) {
    FlameNode sample{"", kind, 0, {}};
    out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y - 10) +
           "\" width=\"12\" height=\"12\" fill=\"" + fill_for(sample) + "\"/><text x=\"" +
           std::to_string(x + 16) + "\" y=\"" + std::to_string(y) + "\">" + words + "</text>";
    x += 150;
  }
  if (inlined) {
    FlameNode sample{"", FrameKind::CopyHelper, 0, {}, true, ""};
    out += "<rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y - 10) +
           "\" width=\"12\" height=\"12\" fill=\"" + fill_for(sample) + "\"" + kInlinedRect +
           "/><text x=\"" + std::to_string(x + 16) + "\" y=\"" + std::to_string(y) +
           "\" font-style=\"italic\">inlined (debuginfo)</text>";
  }
  out += "<text x=\"" + std::to_string(width - kPad) + "\" y=\"" + std::to_string(y) +
         "\" text-anchor=\"end\" fill=\"#555\">width: share of " +
         "the profile; hover a frame "
         "for its numbers</text>\n";
}

}  // namespace

std::string render_flame_graph_svg(const FlameNode& root, const FlameGraphStyle& style) {
  const size_t depth = root.value ? flame_depth(root) : 1;
  std::string out;
  Renderer renderer(style, root.value, depth, out);
  const int width = style.width, height = renderer.height();
  out = "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
        std::to_string(width) + "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " +
        std::to_string(width) + " " + std::to_string(height) +
        "\" font-family=\"monospace\" font-size=\"" + std::to_string(kFontSize) +
        "\" role=\"img\">\n<rect width=\"100%\" height=\"100%\" fill=\"#fdfdfd\"/>\n<text x=\"" +
        std::to_string(width / 2) + "\" y=\"24\" font-size=\"16\" text-anchor=\"middle\">" +
        markup_escape(style.title) + "</text>\n";
  if (root.value == 0) {
    out += "<text x=\"" + std::to_string(width / 2) + "\" y=\"" + std::to_string(kTop + 12) +
           "\" text-anchor=\"middle\">no " + markup_escape(style.unit) +
           " in this profile</text>\n";
  } else {
    renderer.frame(root, kPad, 0);
  }
  legend(out, width, height, has_inlined(root));
  out += "</svg>\n";
  return out;
}

std::string render_profile_flame_graph(const StackProfile& profile, std::string title) {
  const bool sampled = profile.sampling;
  FlameGraphStyle style;
  style.title = std::move(title);
  style.unit = sampled ? "samples" : "calls";
  style.whole = "the checks' " + style.unit;
  style.seconds_per_unit = sampled ? static_cast<double>(profile.sample_period_ns) / 1e9 : 0;
  style.intervals = sampled;
  return render_flame_graph_svg(
      build_flame_tree(profile, sampled ? kSamples : kCalls, FoldingRules::defaults(), "all"),
      style);
}

}  // namespace hucprof
