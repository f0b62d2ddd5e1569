#pragma once
#include <string>
#include <string_view>

namespace hucprof {

// Text and attribute values for HTML and SVG: &, <, >, " and ' as entities, so a kernel symbol,
// a label or a reason in words can never become markup.
std::string markup_escape(std::string_view text);

}  // namespace hucprof
