#pragma once
#include <map>
#include <set>
#include <string>

namespace hucprof {

// The data the folder works from: which functions are the usercopy checks (and what kind of
// check each one is) and which are copy helpers that sit between a call site and the check.
// Names are normalized (no compiler suffixes). Kept as data so that a new kernel's helper is a
// one-line change, and so the BPF side gets its address ranges from the same list.
struct FoldingRules {
  // check function → the `step` label of time spent in it: which part of the checks ran,
  // named after its function ("entry": __check_object_size's own code and what is inlined in
  // it; "virt_addr_valid", "slab_object", ...: docs/metrics.md), never after a kind of object.
  std::map<std::string, std::string, std::less<>> check_functions;
  // Copy helpers: _copy_to_iter, simple_copy_to_iter, skb_copy_datagram_iter, ...
  std::set<std::string, std::less<>> copy_helpers;
  // Inline functions that only check on the way to the copy (check_copy_size, check_object_size):
  // the function above them in a source-line chain is the copy a check was reached through.
  std::set<std::string, std::less<>> check_wrappers;

  static FoldingRules defaults();
};

}  // namespace hucprof
