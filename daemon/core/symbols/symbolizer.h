#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/symbols/kallsyms_index.h"

namespace hucprof {

// Kernel address → exact symbol name. An interface so the interval builder can be tested with
// a fixed table.
class Symbolizer {
 public:
  virtual ~Symbolizer() = default;
  virtual std::optional<std::string> name(uint64_t addr) = 0;
  // The symbol with the offsets profiles keep (from the symbol, from _stext). Name-only
  // symbolizers (tests) get offsets of 0.
  virtual std::optional<ResolvedFrame> frame(uint64_t addr);
  // The same for a return address of a stack (every frame but a sampled leaf): named like
  // frame(), its source lines are those of the call instruction before it.
  virtual std::optional<ResolvedFrame> return_frame(uint64_t addr) { return frame(addr); }
  // Whether frames carry source lines (hucprof found the kernel's debuginfo).
  virtual bool has_sources() const { return false; }
  // How many frames so far went out without the source lines that are still being looked up
  // (a rise while symbolizing a stack: it is not finished yet).
  virtual uint64_t unanswered() const { return 0; }
  // Moves whenever an address may resolve differently than before (kallsyms read again, new
  // debuginfo): whatever was folded or symbolized under another generation is stale. The
  // interval builder checks it; nobody has to tell it.
  virtual uint64_t generation() const { return 0; }
};

// Symbolizes from a KallsymsIndex, read once. An address that does not resolve stays
// unresolved (the caller shows it as "[unknown]" and counts it): re-reading kallsyms for it would
// not help, as only a module load brings new text. So kallsyms is read again only when the
// kernel's module list changed, checked at most once per drain.
class KallsymsSymbolizer : public Symbolizer {
 public:
  using Loader = std::function<KallsymsIndex()>;
  // /proc/modules as text, nullopt when unreadable (a kernel without modules).
  using ModuleList = std::function<std::optional<std::string>()>;

  // `modules` is the module list read right before `index` was.
  KallsymsSymbolizer(KallsymsIndex index, const std::optional<std::string>& modules, Loader loader,
                     ModuleList module_list);

  std::optional<std::string> name(uint64_t addr) override;
  std::optional<ResolvedFrame> frame(uint64_t addr) override;
  // Once per drain, before symbolizing: reloads kallsyms when the module list changed. True when
  // it did (the generation moved).
  bool begin_interval();
  uint64_t reloads() const { return reloads_; }
  uint64_t generation() const override { return reloads_; }
  const KallsymsIndex& index() const { return index_; }

 private:
  KallsymsIndex index_;
  std::string modules_;  // module_list_signature of the list index_ was read after
  Loader loader_;
  ModuleList module_list_;
  uint64_t reloads_ = 0;
};

}  // namespace hucprof
