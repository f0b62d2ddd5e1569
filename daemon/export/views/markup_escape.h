#pragma once
#include <string>
#include <string_view>

namespace hucprof {

// Every piece of text in HTML (the web view) and SVG (the flame graph, inline in the page too)
// goes through here: printable_name (core/base/quoted_value.h) then &, <, >, " and ' as entities.
// So a kernel symbol, a label or a reason in words can never become markup, and the document stays
// well-formed XML 1.0 and valid UTF-8 whatever it held: control characters (which XML forbids
// even as character references) and bytes that are not UTF-8 read \xNN, visibly, and a name
// longer than kMaxNameBytes is cut with "…".
std::string markup_escape(std::string_view text);

}  // namespace hucprof
