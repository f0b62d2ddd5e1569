#pragma once
// The listening socket of an HttpServer: bound and listening (or adopted from systemd) before
// any thread runs, and how many connections it may hold.
#include <cstddef>
#include <string>

#include <boost/asio/ip/tcp.hpp>

#include "core/base/result.h"
#include "core/text/listen_address.h"

namespace hucprof {

// "[::1]:9478" or "127.0.0.1:9478".
std::string endpoint_text(const boost::asio::ip::tcp::endpoint& endpoint);

// The endpoint of a numeric address (a host name is resolved before: resolve_listen_address).
boost::asio::ip::tcp::endpoint endpoint_of(const ListenAddress& address);

// Opens, binds and listens; dual_stack takes IPv4 too on an IPv6 socket (":port", "[::]:port").
// Errors mean exit 1: the address is well formed, this host cannot listen there.
Result<void> listen_on(boost::asio::ip::tcp::acceptor& acceptor,
                       boost::asio::ip::tcp::endpoint endpoint, bool dual_stack);

// `wanted`, or as many as RLIMIT_NOFILE leaves once everything else is open: past the limit
// every accept fails, and the connections that then wait in the listen queue include scrapers.
size_t connection_limit(size_t wanted);

}  // namespace hucprof
