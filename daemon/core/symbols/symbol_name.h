#pragma once
#include <string_view>

namespace hucprof {

// Strips compiler-generated suffixes (".part.0", ".isra.0", ".constprop.0", ".cold",
// ".llvm.123", and chains of them) so that labels name the function a kernel developer wrote.
// Attaching always uses the exact kallsyms name.
std::string_view normalize_symbol(std::string_view exact);

}  // namespace hucprof
