#include "app/systemd_sockets.h"

#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include <cstring>

namespace hucprof {

Result<std::vector<int>> systemd_listen_sockets() {
  const int n = sd_listen_fds(1);
  if (n < 0)
    return Error{std::string("cannot take the sockets systemd passed: ") + std::strerror(-n)};
  if (n == 0) {
    return Error{
        "systemd passed no socket (LISTEN_FDS unset or not for this process): start hucprof "
        "from a .socket unit, or drop --web.systemd-socket"};
  }
  std::vector<int> fds;
  for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; ++fd) {
    if (sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1) <= 0) {
      return Error{"socket " + std::to_string(fd) +
                   " passed by systemd is not a listening stream socket (ListenStream= is needed)"};
    }
    fds.push_back(fd);
  }
  return fds;
}

}  // namespace hucprof
