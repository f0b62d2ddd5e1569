#pragma once
#include <string>
#include <string_view>

namespace hucprof {

// What replaces a raw kernel address found in a label value.
inline constexpr std::string_view kRedactedAddress = "[kernel address]";

// Every label value goes through here on its way to Prometheus. Two guarantees, whatever the
// upstream stages produced:
//  - no raw kernel address survives (KASLR: one address next to a symbol name reveals the slide);
//    function-relative offsets such as "udp_recvmsg+0x1a" are kept;
//  - the value is printable_name (core/base/quoted_value.h): valid UTF-8 (Prometheus rejects the
//    whole scrape otherwise) without control characters (`curl /metrics` shows it on a
//    terminal), bytes that are not UTF-8 and control bytes written \xNN, at most kMaxNameBytes.
std::string sanitize_label_value(std::string_view value);

}  // namespace hucprof
