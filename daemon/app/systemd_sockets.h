#pragma once
#include <string>
#include <vector>

#include "core/base/result.h"

namespace hucprof {

// --web.systemd-socket: the listening TCP sockets systemd passed (LISTEN_FDS, from a .socket
// unit or systemd-socket-activate), or why there are none to serve on, in words. Takes them:
// the LISTEN_* variables are unset so no child inherits them.
Result<std::vector<int>> systemd_listen_sockets();

}  // namespace hucprof
