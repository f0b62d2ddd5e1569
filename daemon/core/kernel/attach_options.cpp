#include "core/kernel/attach_options.h"

#include "core/symbols/folding_rules.h"

namespace hucprof {

std::vector<std::string> default_copy_helpers() {
  static const std::vector<std::string> helpers = [] {
    const FoldingRules rules = FoldingRules::defaults();
    return std::vector<std::string>(rules.copy_helpers.begin(), rules.copy_helpers.end());
  }();
  return helpers;
}

}  // namespace hucprof
