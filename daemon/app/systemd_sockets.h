#pragma once
#include <string>
#include <variant>
#include <vector>

namespace hucprof {

// --web.systemd-socket: the listening TCP sockets systemd passed (LISTEN_FDS, from a .socket
// unit or systemd-socket-activate), or why there are none to serve on, in words. Takes them:
// the LISTEN_* variables are unset so no child inherits them.
std::variant<std::vector<int>, std::string> systemd_listen_sockets();

}  // namespace hucprof
