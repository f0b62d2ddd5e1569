#pragma once
#include <string>
#include <string_view>

namespace hucprof {

// What in /proc/modules tells that kernel text came or went: each module's name, size, state
// and load address, one per line. Reference counts and users are left out: they change with
// every socket a module serves, and a reload for each would re-read kallsyms all the time.
std::string module_list_signature(std::string_view proc_modules);

}  // namespace hucprof
