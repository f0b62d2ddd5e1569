#include "web/io_thread.h"

#include <exception>

#include <spdlog/spdlog.h>

namespace hucprof {

void run_io_thread(boost::asio::io_context& io) {
  while (true) {
    try {
      io.run();
      return;
    } catch (const std::exception& e) {
      spdlog::error("web: an I/O handler threw, serving on: {}", e.what());
    } catch (...) {
      spdlog::error("web: an I/O handler threw something not a std::exception, serving on");
    }
  }
}

}  // namespace hucprof
