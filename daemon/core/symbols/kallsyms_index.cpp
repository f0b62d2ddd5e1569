#include "core/symbols/kallsyms_index.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>

#include "core/base/text_chars.h"
#include "core/symbols/symbol_name.h"

namespace hucprof {
namespace {

// kallsyms has no sizes. Where the next symbol belongs to another image (vmlinux → module, or
// module → module) the distance says nothing about the function, so assume one page; the same
// for the very last symbol.
constexpr uint64_t kUnknownSizeEstimate = 4096;

// Markers the linker puts at the end of a text section; what follows them up to the next symbol
// is not code, so they must not swallow it.
constexpr size_t kSmallInput = 4096;  // text symbols; a real kallsyms has 50k-200k

bool is_end_marker(std::string_view name) { return name == "_etext" || name == "_einittext"; }

bool is_text_type(char type) { return type == 't' || type == 'T' || type == 'w' || type == 'W'; }

// Plain loops: string_view::find_first_of calls memchr once per character, which was most of
// the parse time.
std::string_view next_field(std::string_view& line) {
  const char* p = line.data();
  const char* end = p + line.size();
  while (p != end && is_blank(*p)) ++p;
  const char* start = p;
  while (p != end && !is_blank(*p)) ++p;
  line = std::string_view(p, static_cast<size_t>(end - p));
  return std::string_view(start, static_cast<size_t>(p - start));
}

}  // namespace

// Turns lines into entries; kept apart from the index so parse() reads as the three steps it is.
class KallsymsIndex::Builder {
 public:
  explicit Builder(KallsymsIndex& index) : index_(index) {}

  // "ffffffffc0a01000 t foo\t[nf_tables]"; malformed and non-text lines are skipped.
  void add_line(std::string_view line) {
    std::string_view addr = next_field(line);
    std::string_view type = next_field(line);
    std::string_view name = next_field(line);
    if (addr.empty() || type.size() != 1 || name.empty()) return;
    if (!is_text_type(type[0])) {
      if (type[0] == 'D' || type[0] == 'd') note_init_task(addr, name);
      return;
    }
    if (name.size() > std::numeric_limits<uint16_t>::max()) return;
    uint64_t address = 0;
    auto [ptr, ec] = std::from_chars(addr.data(), addr.data() + addr.size(), address, 16);
    if (ec != std::errc{} || ptr != addr.data() + addr.size()) return;
    std::string_view module = next_field(line);
    if (module.size() >= 2 && module.front() == '[' && module.back() == ']') {
      module = module.substr(1, module.size() - 2);
    } else {
      module = {};
    }

    if (index_.symbols_.size() == kSmallInput) {
      // A real kallsyms: room for a large distro kernel with modules (~200k text symbols, ~25
      // bytes of name each). Growing by doubling touches twice the final memory, and a first
      // touch is a page fault, which costs ~13 us in the VMs we run in: that was most of the
      // parse time. Untouched reservation costs address space only, so it is not shrunk
      // afterwards either. Not before kSmallInput lines, so small inputs (tests, the fuzzer)
      // do not pay 14 MB each.
      index_.symbols_.reserve(1 << 18);
      index_.names_.reserve(1 << 23);
    }
    Entry e;
    e.address = address;
    e.name_offset = static_cast<uint32_t>(index_.names_.size());
    e.name_length = static_cast<uint16_t>(name.size());
    e.module = intern(module);
    // Until finish() computes sizes, the field holds the alias rank: globals (T/W) first.
    e.size = (type[0] == 'T' || type[0] == 'W') ? 0 : 1;
    index_.names_.append(name);
    index_.symbols_.push_back(e);
    if (name == "_stext" && module.empty()) index_.text_start_ = address;
  }

  void finish() {
    if (init_task_start_ && init_task_end_ > init_task_start_) {
      index_.task_stack_size_ = init_task_end_ - init_task_start_;
    }
    auto& syms = index_.symbols_;
    // Aliases (several names at one address, e.g. _text/_stext) resolve to the first of their
    // group: globals first, then file order, which is what a reader of the source would expect.
    std::stable_sort(syms.begin(), syms.end(), [](const Entry& a, const Entry& b) {
      if (a.address != b.address) return a.address < b.address;
      return a.size < b.size;
    });
    index_.addresses_hidden_ = !syms.empty() && syms.back().address == 0;  // sorted: max is 0

    size_t group_end = 0;
    for (size_t i = 0; i < syms.size(); ++i) {
      Entry& s = syms[i];
      if (index_.addresses_hidden_) {
        s.size = 0;
        continue;
      }
      if (group_end <= i) {
        group_end = i + 1;
        while (group_end < syms.size() && syms[group_end].address == s.address) ++group_end;
      }
      if (is_end_marker(index_.name_of(s))) {
        s.size = 0;
      } else if (group_end == syms.size()) {
        s.size = kUnknownSizeEstimate;
      } else {
        const Entry& next = syms[group_end];
        uint64_t distance = next.address - s.address;
        s.size = next.module == s.module ? distance : std::min(distance, kUnknownSizeEstimate);
      }
    }
  }

 private:
  uint16_t intern(std::string_view module) {
    // Lines of one module come together: remember the last one instead of hashing every line.
    if (module == last_module_) return last_id_;
    auto [it, inserted] = ids_.try_emplace(std::string(module), 0);
    if (inserted) {
      if (index_.modules_.size() > std::numeric_limits<uint16_t>::max()) return 0;
      it->second = static_cast<uint16_t>(index_.modules_.size());
      index_.modules_.emplace_back(module);
    }
    last_module_ = index_.modules_[it->second];
    last_id_ = it->second;
    return last_id_;
  }

  // The first task's stack area: the linker script (INIT_TASK_DATA) makes it THREAD_SIZE long.
  void note_init_task(std::string_view addr, std::string_view name) {
    uint64_t* slot = name == "__start_init_task" ? &init_task_start_
                     : name == "__end_init_task" ? &init_task_end_
                                                 : nullptr;
    if (!slot) return;
    uint64_t address = 0;
    auto [ptr, ec] = std::from_chars(addr.data(), addr.data() + addr.size(), address, 16);
    if (ec == std::errc{} && ptr == addr.data() + addr.size()) *slot = address;
  }

  KallsymsIndex& index_;
  uint64_t init_task_start_ = 0;
  uint64_t init_task_end_ = 0;
  std::unordered_map<std::string, uint16_t> ids_{{"", 0}};
  std::string last_module_;
  uint16_t last_id_ = 0;
};

KallsymsIndex KallsymsIndex::parse(std::istream& in) {
  KallsymsIndex index;
  Builder builder(index);
  // Chunked reads and a hand-rolled splitter rather than getline/operator>> per field: the real
  // file has ~150k lines and is read at start-up and on every refresh, and this never holds
  // its 5 MB of text at once.
  constexpr size_t kChunk = 1 << 16;
  std::string buffer;
  std::string carry;  // an incomplete last line of the previous chunk
  buffer.resize(kChunk);
  for (;;) {
    in.read(buffer.data(), kChunk);
    size_t got = static_cast<size_t>(in.gcount());
    if (got == 0) break;
    std::string_view chunk(buffer.data(), got);
    size_t first_eol = chunk.find('\n');
    if (!carry.empty() || first_eol == std::string_view::npos) {
      carry.append(chunk.substr(0, first_eol));
      if (first_eol == std::string_view::npos) continue;
      builder.add_line(carry);
      carry.clear();
      chunk.remove_prefix(first_eol + 1);
    }
    for (size_t eol; (eol = chunk.find('\n')) != std::string_view::npos;) {
      builder.add_line(chunk.substr(0, eol));
      chunk.remove_prefix(eol + 1);
    }
    carry.assign(chunk);
  }
  if (!carry.empty()) builder.add_line(carry);
  builder.finish();
  return index;
}

KernelSymbol KallsymsIndex::symbol_of(const Entry& e) const {
  return KernelSymbol{e.address, e.size, std::string(name_of(e)), modules_[e.module]};
}

std::optional<ResolvedFrame> KallsymsIndex::resolve(uint64_t addr) const {
  if (addresses_hidden_) return std::nullopt;
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), addr,
                                [](uint64_t a, const Entry& s) { return a < s.address; });
  if (after == symbols_.begin()) return std::nullopt;
  auto it = std::prev(after);
  // Step back to the preferred alias (first of the group).
  while (it != symbols_.begin() && std::prev(it)->address == it->address) --it;
  if (addr - it->address >= it->size) return std::nullopt;
  const bool vmlinux_text = it->module == 0 && text_start_ != 0 && addr >= text_start_;
  return ResolvedFrame{std::string(name_of(*it)), modules_[it->module], addr - it->address,
                       vmlinux_text ? addr - text_start_ : 0, nullptr};
}

std::vector<KernelSymbol> KallsymsIndex::find_normalized(std::string_view normalized) const {
  std::vector<KernelSymbol> found;
  for (const Entry& e : symbols_) {
    std::string_view name = name_of(e);
    // Cheap reject before normalizing: the normalized name is always a prefix.
    if (name.starts_with(normalized) && normalize_symbol(name) == normalized) {
      found.push_back(symbol_of(e));
    }
  }
  return found;
}

std::vector<KernelSymbol> KallsymsIndex::find_vmlinux_prefixed(std::string_view prefix) const {
  std::vector<KernelSymbol> found;
  for (const Entry& e : symbols_) {
    if (e.module == 0 && name_of(e).starts_with(prefix)) found.push_back(symbol_of(e));
  }
  return found;
}

std::optional<KernelSymbol> KallsymsIndex::find_exact(std::string_view exact) const {
  auto it = std::find_if(symbols_.begin(), symbols_.end(),
                         [&](const Entry& e) { return name_of(e) == exact; });
  if (it == symbols_.end()) return std::nullopt;
  return symbol_of(*it);
}

}  // namespace hucprof
