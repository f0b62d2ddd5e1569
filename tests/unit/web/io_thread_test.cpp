// run_io_thread: what escapes a completion handler is logged, and the thread serves on instead
// of taking the process down with std::terminate.
#include "web/io_thread.h"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>

namespace hucprof {
namespace {

TEST(IoThread, HandlersThatThrowLeaveTheThreadServing) {
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::promise<void> served;
  boost::asio::post(io, [] { throw std::length_error("field value too large"); });
  boost::asio::post(io, [] { throw 37; });
  boost::asio::post(io, [&served] { served.set_value(); });
  std::thread thread([&io] { run_io_thread(io); });
  EXPECT_EQ(served.get_future().wait_for(std::chrono::seconds(30)), std::future_status::ready);
  io.stop();  // and the thread returns
  thread.join();
}

}  // namespace
}  // namespace hucprof
