#pragma once
#include <boost/asio/io_context.hpp>

namespace hucprof {

// Runs `io` on the calling thread until it is stopped. An exception out of a completion handler
// would end the thread and, through std::terminate, the process: one client could take the
// daemon down. Reads are bounded before Beast's throwing code (web_input/request_reader.h) and
// handlers are caught where they run, so this is the last resort should anything else throw:
// logged, and the thread serves on (Asio lets run() go on after a handler threw).
void run_io_thread(boost::asio::io_context& io);

}  // namespace hucprof
