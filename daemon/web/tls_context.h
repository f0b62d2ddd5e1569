#pragma once
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "core/base/result.h"
#include "web_input/web_config.h"

namespace hucprof {

// The OpenSSL server context a web config's tls_server_config describes: certificate chain and
// key, TLS versions, cipher suites and groups, and the client certificate policy mapped from
// Go's ClientAuthType. Errors name the setting and the file, in one line. What loads but will
// not work as meant (a certificate outside its validity period) is added to `warnings`.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const WebTlsConfig& tls, std::vector<std::string>* warnings = nullptr);

// The subject alternative names of a certificate as client_allowed_sans compares them: DNS
// names, e-mail addresses, URIs, and IP addresses in their usual text form.
std::vector<std::string> certificate_sans(X509* certificate);

// Whether the peer of a finished handshake presented a certificate carrying one of `allowed`.
bool peer_has_allowed_san(SSL* ssl, const std::vector<std::string>& allowed);

}  // namespace hucprof
