#pragma once
#include <string>

#include "core/profile/flame_tree.h"

namespace hucprof {

struct FlameGraphStyle {
  std::string title;
  std::string unit = "samples";  // what a node's value counts, for the hover text
  double seconds_per_unit = 0;   // > 0: the hover text gives CPU time too (sampling)
  std::string whole = "all";     // what the hover text's percentage is of: "(5.2 % of all)"
  // Sampled values: each percentage with its 95 % interval (Wilson's at the least design effect,
  // core/cost/share_interval.h), "(5.20 % of all; 95 % interval 3.10-8.01 %)".
  bool intervals = false;
  int width = 1200;  // pixels
};

// A flame graph as one self-contained SVG document: no script, no external font or style, a
// name on every frame wide enough to hold one and the full name, value and share in each
// frame's <title> (the browser shows it on hover, with JavaScript off too). Root at the bottom.
// Usercopy check functions are blue, copy helpers green, the rest of the kernel warm colours.
std::string render_flame_graph_svg(const FlameNode& root, const FlameGraphStyle& style);

// The flame graph of a whole profile as the report and the web view draw it: CPU samples with
// their CPU time when it was sampled, else check calls; default folding, root "all"; a frame's
// percentage is of the checks' samples (with its 95 % interval) or calls, the graph's whole.
std::string render_profile_flame_graph(const StackProfile& profile, std::string title);

}  // namespace hucprof
