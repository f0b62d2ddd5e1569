#pragma once
// Asking binutils (the build's nm, addr2line) what a test's ELF file holds: a reference written
// by no one here. HUC_NM is the test target's compile definition.
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

namespace hucprof {

// What `command` printed on stdout.
inline std::string command_output(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[1 << 16];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  pclose(pipe);
  return out;
}

// Symbol addresses of an ELF file, by nm.
inline std::map<std::string, uint64_t> nm_symbols(const std::string& nm, const std::string& elf) {
  std::map<std::string, uint64_t> out;
  std::istringstream in(command_output(nm + " " + elf));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string addr, type, name;
    if (fields >> addr >> type >> name) out[name] = std::stoull(addr, nullptr, 16);
  }
  return out;
}

}  // namespace hucprof
