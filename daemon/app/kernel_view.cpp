#include "app/kernel_view.h"

#include <cstring>
#include <istream>

#include "core/files/file_text.h"

namespace hucprof {

namespace {

// /proc/kallsyms of a large host with every module loaded is ~20 MB; a file past this bound is
// not a kallsyms (--kallsyms names a test's file).
constexpr uint64_t kMaxKallsymsBytes = uint64_t{256} << 20;

}  // namespace

KallsymsIndex load_kallsyms(const std::string& path, std::string* problem) {
  Result<RegularFile> opened = open_regular_file(path, kMaxKallsymsBytes);
  if (!opened.ok()) {
    if (problem) *problem = opened.error().text;
    return {};
  }
  // Parsed as it is read: the file is never in memory whole.
  FileStreamBuf bytes(std::move(opened).value(), kMaxKallsymsBytes);
  std::istream in(&bytes);
  KallsymsIndex index = KallsymsIndex::parse(in);
  if (bytes.exceeded() || bytes.error()) {
    if (problem) {
      *problem = bytes.error() ? std::strerror(bytes.error())
                               : "larger than " + std::to_string(kMaxKallsymsBytes) + " bytes";
    }
    return {};
  }
  if (problem) problem->clear();
  return index;
}

Result<KernelView> load_kernel_view(const std::string& kallsyms_path) {
  KernelView view;
  std::string problem;
  view.modules = read_file_text(kModulesPath);
  view.kallsyms = load_kallsyms(kallsyms_path, &problem);
  if (!problem.empty()) {
    return Error{"cannot read " + kallsyms_path + " (" + problem + "): call sites cannot be named",
                 kExitCannotRun};
  }
  if (view.kallsyms.size() == 0) {
    return Error{kallsyms_path + " has no text symbols", kExitCannotRun};
  }
  if (view.kallsyms.addresses_hidden()) {
    return Error{kallsyms_path +
                     " shows zero addresses (kernel.kptr_restrict): run as root or with CAP_SYSLOG",
                 kExitCannotRun};
  }
  view.facts = KernelFacts::probe();
  view.hardened = evaluate_hardened_usercopy(
      view.facts.config ? std::optional<std::string_view>(*view.facts.config) : std::nullopt,
      view.facts.cmdline, !view.kallsyms.find_normalized("__check_object_size").empty());
  return view;
}

AttachPlan plan_attach(const KernelView& kernel, const AttachOptions& options) {
  AttachFacts facts;
  facts.kernel = kernel.facts.support;
  facts.hardened = kernel.hardened;
  facts.task_stack_size = kernel.kallsyms.task_stack_size();
  // Parsed at most once, and only when a question below needs it (--mode sample and
  // --probe.attach kprobe with --probe.subchecks attach need none).
  BtfPtr types;
  bool loaded = false;
  auto kernel_btf = [&]() -> const btf* {
    if (!loaded && kernel.facts.support.btf.ok) types = load_kernel_btf();
    loaded = true;
    return types.get();
  };
  if (options.subchecks == SubcheckCounting::Classify) {
    facts.slab_marker = read_slab_marker(kernel_btf());
    facts.page_layout = read_page_layout(kernel_btf());
  }
  for (const std::string& symbol : fentry_candidates(kernel.kallsyms, facts, options)) {
    facts.fentry_errors.emplace(symbol, fentry_attach_error(kernel_btf(), symbol));
  }
  return compute_attach_plan(kernel.kallsyms, facts, options);
}

}  // namespace hucprof
