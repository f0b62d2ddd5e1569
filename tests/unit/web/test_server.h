#pragma once
// An HttpServer on 127.0.0.1 and a port of the kernel's choosing, for the tests that talk to it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "web/http_server.h"
#include "web/web_security.h"

namespace hucprof::testing_http {

inline std::unique_ptr<HttpServer> start_server(HttpServerLimits limits = {}) {
  auto started = HttpServer::start(ListenAddress{ListenAddress::Kind::IPv4, "127.0.0.1", 0},
                                   std::make_shared<WebSecuritySource>(), limits);
  if (!started.ok()) {
    ADD_FAILURE() << started.error().text;
    return nullptr;
  }
  return std::move(started).value();
}

// A 200 response with BODY, as a route's handler returns it.
inline HttpResponse text(std::string body) {
  HttpResponse response;
  response.body = std::move(body);
  return response;
}

}  // namespace hucprof::testing_http
