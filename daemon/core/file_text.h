#pragma once
#include <optional>
#include <string>

namespace hucprof {

// The whole text of a small file (procfs, sysfs, configs); nullopt when it cannot be read.
std::optional<std::string> read_file_text(const std::string& path);

}  // namespace hucprof
