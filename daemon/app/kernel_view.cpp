#include "app/kernel_view.h"

#include <fstream>

namespace hucprof {

KallsymsIndex load_kallsyms(const std::string& path, bool* readable) {
  std::ifstream in(path);
  if (readable) *readable = static_cast<bool>(in);
  if (!in) return {};
  return KallsymsIndex::parse(in);
}

std::variant<KernelView, std::string> load_kernel_view(const std::string& kallsyms_path) {
  KernelView view;
  bool readable = false;
  view.kallsyms = load_kallsyms(kallsyms_path, &readable);
  if (!readable) return "cannot read " + kallsyms_path + ": call sites cannot be named";
  if (view.kallsyms.size() == 0) return kallsyms_path + " has no text symbols";
  if (view.kallsyms.addresses_hidden()) {
    return kallsyms_path +
           " shows zero addresses (kernel.kptr_restrict): run as root or with CAP_SYSLOG";
  }
  view.facts = KernelFacts::probe();
  view.hardened = evaluate_hardened_usercopy(
      view.facts.config ? std::optional<std::string_view>(*view.facts.config) : std::nullopt,
      view.facts.cmdline, !view.kallsyms.find_normalized("__check_object_size").empty());
  return view;
}

}  // namespace hucprof
