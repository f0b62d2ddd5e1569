#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/kallsyms_index.h"

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
};

// Symbolizes from a KallsymsIndex and reloads it (at most once per interval) when an address
// misses: a module loaded after start-up brings new text.
class KallsymsSymbolizer : public Symbolizer {
 public:
  using Loader = std::function<KallsymsIndex()>;
  KallsymsSymbolizer(KallsymsIndex index, Loader loader);

  std::optional<std::string> name(uint64_t addr) override;
  std::optional<ResolvedFrame> frame(uint64_t addr) override;
  // Allows one more reload; returns true if the index was reloaded during the last interval
  // (cached folds must then be dropped).
  bool begin_interval();
  const KallsymsIndex& index() const { return index_; }

 private:
  KallsymsIndex index_;
  Loader loader_;
  bool reload_allowed_ = true;
  bool reloaded_ = false;
};

}  // namespace hucprof
