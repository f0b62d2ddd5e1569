#include "debuginfo/dwarf_lines.h"

#include <dwarf.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "core/base/quoted_value.h"

namespace hucprof {

namespace {

// A path is longer than a name: the build directory is cut off it first.
constexpr size_t kMaxPathBytes = 4096;

// At most `max` bytes of a NUL-terminated string from the file, and one more to show it was
// longer: a name of megabytes is never scanned whole.
std::string_view at_most(const char* text, size_t max) {
  return text ? std::string_view(text, ::strnlen(text, max + 1)) : std::string_view();
}

std::string die_name(Dwarf_Die* die) {
  return function_name(dwarf_diename(die));  // follows DW_AT_abstract_origin of inlined calls
}

std::optional<Dwarf_Word> udata(Dwarf_Die* die, unsigned attribute) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_attr(die, attribute, &attr) == nullptr || dwarf_formudata(&attr, &value) != 0) {
    return std::nullopt;
  }
  return value;
}

std::string comp_dir_of(Dwarf_Die* unit) {
  Dwarf_Attribute attr;
  return std::string(
      at_most(dwarf_formstring(dwarf_attr(unit, DW_AT_comp_dir, &attr)), kMaxPathBytes));
}

}  // namespace

std::string function_name(const char* name) {
  // A DW_AT_name of "" (a corrupt or hand-made file) would make a frame, and a copy label,
  // without a name.
  if (name == nullptr || *name == '\0') return "[unnamed]";
  return printable_text(at_most(name, DwarfBounds::kMaxNameBytes), DwarfBounds::kMaxNameBytes);
}

std::string source_path(const char* file, const char* comp_dir) {
  if (file == nullptr) return "";
  std::string_view path = at_most(file, kMaxPathBytes);
  const std::string_view dir = at_most(comp_dir, kMaxPathBytes);
  if (!dir.empty() && path.size() > dir.size() + 1 && path.starts_with(dir) &&
      path[dir.size()] == '/') {
    path.remove_prefix(dir.size() + 1);
  }
  while (path.starts_with("./")) path.remove_prefix(2);
  return printable_text(path.substr(0, DwarfBounds::kMaxNameBytes + 1), DwarfBounds::kMaxNameBytes);
}

void fit_names(SourceLines& lines, size_t max_bytes) {
  std::vector<size_t> lengths;
  for (const SourceLine& l : lines) {
    lengths.push_back(l.function.size());
    lengths.push_back(l.file.size());
  }
  size_t total = 0;
  for (size_t n : lengths) total += n;
  if (total <= max_bytes) return;
  // The largest cap whose capped sum fits: grow it past each length while that still fits.
  std::sort(lengths.begin(), lengths.end());
  size_t below = 0;  // sum of the lengths under the cap
  size_t cap = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const size_t above = lengths.size() - i;  // names that get the cap
    cap = (max_bytes - below) / above;
    if (cap < lengths[i]) break;
    below += lengths[i];
  }
  for (SourceLine& l : lines) {
    for (std::string* name : {&l.function, &l.file}) {
      // Already printable: cutting it again only ends it in "…".
      if (name->size() > cap) *name = printable_text(*name, std::max<size_t>(cap, 3));
    }
  }
}

const UnitLines::Unit& UnitLines::unit(Dwarf_Die* die) {
  const Dwarf_Off key = dwarf_dieoffset(die);
  if (auto it = units_.find(key); it != units_.end()) return it->second;
  Unit u;
  Dwarf_Die child;
  size_t walked = 0;
  if (dwarf_child(die, &child) == 0) {
    do {
      if (++walked > DwarfBounds::kMaxUnitDies) break;
      if (dwarf_tag(&child) != DW_TAG_subprogram) continue;
      // Every range: a function split into hot and cold parts has two.
      Dwarf_Addr base = 0, start = 0, end = 0;
      ptrdiff_t offset = 0;
      while (u.ranges.size() < DwarfBounds::kMaxUnitRanges &&
             (offset = dwarf_ranges(&child, offset, &base, &start, &end)) > 0) {
        if (end > start) u.ranges.push_back({start, end, dwarf_dieoffset(&child)});
      }
    } while (u.ranges.size() < DwarfBounds::kMaxUnitRanges && dwarf_siblingof(&child, &child) == 0);
  }
  std::sort(u.ranges.begin(), u.ranges.end(),
            [](const Range& a, const Range& b) { return a.low < b.low; });
  ++indexed_;
  return units_.emplace(key, std::move(u)).first->second;
}

std::optional<Dwarf_Off> UnitLines::function_at(const Unit& u, Dwarf_Addr pc) const {
  auto it = std::upper_bound(u.ranges.begin(), u.ranges.end(), pc,
                             [](Dwarf_Addr a, const Range& r) { return a < r.low; });
  if (it == u.ranges.begin()) return std::nullopt;
  --it;
  if (pc >= it->high) return std::nullopt;
  return it->function;
}

SourceLinesPtr UnitLines::lines(Dwarf_Die* unit_die, Dwarf_Addr pc) {
  const Unit& u = unit(unit_die);
  const auto function = function_at(u, pc);
  if (!function) return nullptr;
  Dwarf* dwarf = dwarf_cu_getdwarf(unit_die->cu);
  Dwarf_Die outer;
  if (dwarf_offdie(dwarf, *function, &outer) == nullptr) return nullptr;

  // Outermost first: the function, then each inlined call containing pc. Lexical blocks are
  // walked through: an inlined call may sit in one. Within the bounds: past them, the chain
  // ends where the walk stopped.
  std::vector<Dwarf_Die> chain{outer};
  Dwarf_Die scope = outer;
  size_t looked_at = 0;
  for (size_t depth = 0;
       depth < DwarfBounds::kMaxScopeDepth && chain.size() <= DwarfBounds::kMaxInlineDepth;
       ++depth) {
    bool deeper = false;
    Dwarf_Die child;
    if (dwarf_child(&scope, &child) != 0) break;
    do {
      if (++looked_at > DwarfBounds::kMaxDiesPerLookup) break;
      const int tag = dwarf_tag(&child);
      if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) continue;
      if (dwarf_haspc(&child, pc) != 1) continue;
      if (tag == DW_TAG_inlined_subroutine) chain.push_back(child);
      scope = child;
      deeper = true;
      break;
    } while (dwarf_siblingof(&child, &child) == 0);
    if (!deeper) break;
  }

  const std::string comp_dir = comp_dir_of(unit_die);
  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_getsrcfiles(unit_die, &files, &file_count) != 0) files = nullptr;
  auto file_name = [&](std::optional<Dwarf_Word> index) -> std::string {
    if (!files || !index || *index >= file_count) return "";
    return source_path(dwarf_filesrc(files, *index, nullptr, nullptr), comp_dir.c_str());
  };

  auto out = std::make_shared<SourceLines>();
  out->reserve(chain.size());
  // The innermost function's line is the line table's at pc.
  SourceLine innermost{die_name(&chain.back()), "", 0};
  if (Dwarf_Line* row = dwarf_getsrc_die(unit_die, pc)) {
    int line = 0;
    dwarf_lineno(row, &line);
    innermost.file = source_path(dwarf_linesrc(row, nullptr, nullptr), comp_dir.c_str());
    innermost.line = static_cast<uint32_t>(std::max(line, 0));
  }
  out->push_back(std::move(innermost));
  // Each caller's line is where the call inlined into it is.
  for (size_t i = chain.size() - 1; i > 0; --i) {
    SourceLine caller{die_name(&chain[i - 1]), file_name(udata(&chain[i], DW_AT_call_file)), 0};
    caller.line = static_cast<uint32_t>(udata(&chain[i], DW_AT_call_line).value_or(0));
    out->push_back(std::move(caller));
  }
  fit_names(*out, DwarfBounds::kMaxChainNameBytes);
  return out;
}

}  // namespace hucprof
