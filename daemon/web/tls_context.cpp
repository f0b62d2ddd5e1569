#include "web/tls_context.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <ctime>

#include "core/base/message_text.h"
#include "core/files/file_text.h"

namespace hucprof {
namespace {

constexpr size_t kMaxPemBytes = size_t{1} << 20;
// TLS 1.3 suites are not configurable in Go (and so in the format): accepted and left alone.
constexpr std::array<std::string_view, 3> kTls13Suites{
    "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"};

template <typename T, void (*Free)(T*)>
struct Freer {
  void operator()(T* p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, Freer<BIO, BIO_free_all>>;
using X509Ptr = std::unique_ptr<X509, Freer<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Freer<EVP_PKEY, EVP_PKEY_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, Freer<SSL_CTX, SSL_CTX_free>>;

void free_general_names(GENERAL_NAMES* names) { GENERAL_NAMES_free(names); }
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, Freer<GENERAL_NAMES, free_general_names>>;

// The most recent OpenSSL error in words ("no start line"), emptying the queue.
std::string openssl_error() {
  unsigned long last = 0;
  while (const unsigned long code = ERR_get_error()) last = code;
  if (last == 0) return "unknown OpenSSL error";
  const char* reason = ERR_reason_error_string(last);
  return reason != nullptr ? reason : "OpenSSL error " + std::to_string(last);
}

struct Pem {
  std::string text;
  std::string origin;  // "tls_server_config.cert_file /etc/x.crt" or "tls_server_config.cert"
};

Result<Pem> read_pem(const std::string& file, const std::string& inline_text, const char* file_key,
                     const char* text_key) {
  const std::string prefix = "tls_server_config.";
  if (file.empty()) return Pem{inline_text, prefix + text_key};
  const Result<std::string> read = read_regular_file(file, kMaxPemBytes);
  if (!read.ok()) return cannot_read(file, prefix + file_key, read.error());
  return Pem{read.value(), prefix + file_key + " " + file};
}

// OpenSSL's default when a PEM block is encrypted is to ask for the passphrase on the terminal:
// start-up would hang on a prompt, a reload would block its thread for good. hucprof never
// asks; the callback says it was asked, so the error can say why.
int refuse_passphrase(char*, int, int, void* asked) {
  if (asked != nullptr) *static_cast<bool*>(asked) = true;
  return -1;
}

BioPtr memory_bio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

std::vector<X509Ptr> read_certificates(const std::string& text) {
  std::vector<X509Ptr> certificates;
  BioPtr bio = memory_bio(text);
  while (X509* certificate = PEM_read_bio_X509(bio.get(), nullptr, refuse_passphrase, nullptr)) {
    certificates.emplace_back(certificate);
  }
  ERR_clear_error();  // the read that ends the loop always "fails"
  return certificates;
}

std::string utc_text(const ASN1_TIME* time) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(time, &tm) != 1) return "an unreadable date";
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

// A certificate outside its validity period still loads (so a renewal can follow without a
// restart), but every client that verifies it refuses the connection: worth a warning.
void check_validity(X509* certificate, const Pem& cert, std::vector<std::string>* warnings) {
  if (warnings == nullptr) return;
  if (X509_cmp_current_time(X509_get0_notAfter(certificate)) < 0) {
    warnings->push_back(cert.origin + ": the certificate expired on " +
                        utc_text(X509_get0_notAfter(certificate)) +
                        "; clients that verify it refuse to connect");
  } else if (X509_cmp_current_time(X509_get0_notBefore(certificate)) > 0) {
    warnings->push_back(cert.origin + ": the certificate is not valid before " +
                        utc_text(X509_get0_notBefore(certificate)) +
                        "; clients that verify it refuse to connect");
  }
}

Result<void> use_certificate_and_key(SSL_CTX* ctx, const Pem& cert, const Pem& key,
                                     std::vector<std::string>* warnings) {
  auto chain = read_certificates(cert.text);
  if (chain.empty()) return Error{cert.origin + ": no PEM certificate in it"};
  check_validity(chain.front().get(), cert, warnings);
  if (SSL_CTX_use_certificate(ctx, chain.front().get()) != 1) {
    return Error{cert.origin + ": " + openssl_error()};
  }
  for (size_t i = 1; i < chain.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(ctx, chain[i].get()) != 1)
      return Error{cert.origin + ": " + openssl_error()};
  }
  BioPtr bio = memory_bio(key.text);
  bool asked = false;
  KeyPtr private_key(PEM_read_bio_PrivateKey(bio.get(), nullptr, refuse_passphrase, &asked));
  if (!private_key && asked) {
    ERR_clear_error();
    return Error{
        key.origin +
        ": the key is encrypted, and hucprof (like exporter-toolkit) takes no passphrase: "
        "store it unencrypted, readable by root only (openssl pkey -in KEY -out KEY.plain)"};
  }
  if (!private_key)
    return Error{key.origin + ": no PEM private key in it (" + openssl_error() + ")"};
  if (SSL_CTX_use_PrivateKey(ctx, private_key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return Error{key.origin + ": the key does not belong to the certificate (" + openssl_error() +
                 ")"};
  }
  return {};
}

Result<void> use_client_ca(SSL_CTX* ctx, const Pem& ca) {
  auto certificates = read_certificates(ca.text);
  if (certificates.empty()) return Error{ca.origin + ": no PEM certificate in it"};
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  for (const auto& certificate : certificates) {
    if (X509_STORE_add_cert(store, certificate.get()) != 1) {
      sk_X509_NAME_pop_free(names, X509_NAME_free);
      return Error{ca.origin + ": " + openssl_error()};
    }
    // Tells clients which CA their certificate must come from.
    sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(certificate.get())));
  }
  SSL_CTX_set_client_CA_list(ctx, names);
  return {};
}

// Go's ClientAuthType in OpenSSL's terms. "Any" policies accept whatever certificate comes.
int accept_any_certificate(int, X509_STORE_CTX*) { return 1; }

void set_client_auth(SSL_CTX* ctx, ClientAuth policy) {
  switch (policy) {
    case ClientAuth::NoClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      return;
    case ClientAuth::RequestClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any_certificate);
      return;
    case ClientAuth::RequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         accept_any_certificate);
      return;
    case ClientAuth::VerifyClientCertIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      return;
    case ClientAuth::RequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      return;
  }
}

int protocol_version(TlsVersion version) {
  switch (version) {
    case TlsVersion::TLS10:
      return TLS1_VERSION;
    case TlsVersion::TLS11:
      return TLS1_1_VERSION;
    case TlsVersion::TLS12:
      return TLS1_2_VERSION;
    case TlsVersion::TLS13:
      break;
  }
  return TLS1_3_VERSION;
}

// Go names suites by their IANA names, OpenSSL by its own; SSL_CIPHER_standard_name bridges
// them, over every suite this OpenSSL has.
Result<std::string> openssl_cipher_list(const std::vector<std::string>& names) {
  SslCtxPtr all(SSL_CTX_new(TLS_server_method()));
  if (!all || SSL_CTX_set_cipher_list(all.get(), "ALL:COMPLEMENTOFALL") != 1) {
    return Error{"tls_server_config.cipher_suites: " + openssl_error()};
  }
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(all.get());
  std::string list;
  for (const std::string& name : names) {
    if (std::find(kTls13Suites.begin(), kTls13Suites.end(), name) != kTls13Suites.end()) continue;
    const SSL_CIPHER* found = nullptr;
    for (int i = 0; i < sk_SSL_CIPHER_num(ciphers) && found == nullptr; ++i) {
      const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
      if (const char* standard = SSL_CIPHER_standard_name(cipher); standard && name == standard) {
        found = cipher;
      }
    }
    if (found == nullptr) {
      return Error{"tls_server_config.cipher_suites: \"" + name +
                   "\" is not a TLS 1.2 cipher suite this OpenSSL knows (use Go's names, e.g. "
                   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)"};
    }
    list += (list.empty() ? "" : ":") + std::string(SSL_CIPHER_get_name(found));
  }
  return list;
}

std::string join(const std::vector<std::string>& items, char separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : std::string(1, separator)) + item;
  return out;
}

}  // namespace

Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const WebTlsConfig& tls, std::vector<std::string>* warnings) {
  ERR_clear_error();
  auto context = std::make_shared<boost::asio::ssl::context>(boost::asio::ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_default_passwd_cb(ctx, refuse_passphrase);
  long options = SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;
  if (tls.prefer_server_cipher_suites) options |= SSL_OP_CIPHER_SERVER_PREFERENCE;
  SSL_CTX_set_options(ctx, options);
  SSL_CTX_set_min_proto_version(ctx, protocol_version(tls.min_version));
  SSL_CTX_set_max_proto_version(ctx, protocol_version(tls.max_version));

  auto cert = read_pem(tls.cert_file, tls.cert, "cert_file", "cert");
  if (!cert.ok()) return cert.error();
  auto key = read_pem(tls.key_file, tls.key, "key_file", "key");
  if (!key.ok()) return key.error();
  if (auto used = use_certificate_and_key(ctx, cert.value(), key.value(), warnings); !used.ok()) {
    return used.error();
  }
  if (tls.has_client_ca()) {
    auto ca = read_pem(tls.client_ca_file, tls.client_ca, "client_ca_file", "client_ca");
    if (!ca.ok()) return ca.error();
    if (auto used = use_client_ca(ctx, ca.value()); !used.ok()) return used.error();
  }
  set_client_auth(ctx, tls.client_auth);
  // Session resumption with client certificates needs a context id, or OpenSSL refuses it.
  static constexpr unsigned char kSessionContext[] = "hucprof";
  SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof(kSessionContext) - 1);

  if (!tls.cipher_suites.empty()) {
    auto list = openssl_cipher_list(tls.cipher_suites);
    if (!list.ok()) return list.error();
    if (const std::string& names = list.value();
        !names.empty() && SSL_CTX_set_cipher_list(ctx, names.c_str()) != 1) {
      return Error{"tls_server_config.cipher_suites: " + openssl_error()};
    }
  }
  if (!tls.curve_groups.empty() &&
      SSL_CTX_set1_groups_list(ctx, join(tls.curve_groups, ':').c_str()) != 1) {
    return Error{"tls_server_config.curve_preferences: " + openssl_error()};
  }
  return context;
}

std::vector<std::string> certificate_sans(X509* certificate) {
  std::vector<std::string> sans;
  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(certificate, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return sans;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    auto text_of = [](const ASN1_STRING* s) {
      return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                         static_cast<size_t>(ASN1_STRING_length(s)));
    };
    switch (name->type) {
      case GEN_DNS:
        sans.push_back(text_of(name->d.dNSName));
        break;
      case GEN_EMAIL:
        sans.push_back(text_of(name->d.rfc822Name));
        break;
      case GEN_URI:
        sans.push_back(text_of(name->d.uniformResourceIdentifier));
        break;
      case GEN_IPADD: {
        const std::string raw = text_of(name->d.iPAddress);
        char buffer[INET6_ADDRSTRLEN] = {};
        const int family = raw.size() == 4 ? AF_INET : raw.size() == 16 ? AF_INET6 : 0;
        if (family != 0 && inet_ntop(family, raw.data(), buffer, sizeof(buffer)) != nullptr) {
          sans.emplace_back(buffer);
        }
        break;
      }
      default:
        break;
    }
  }
  return sans;
}

bool peer_has_allowed_san(SSL* ssl, const std::vector<std::string>& allowed) {
  X509Ptr peer(SSL_get1_peer_certificate(ssl));
  if (!peer) return false;
  const auto sans = certificate_sans(peer.get());
  return std::any_of(sans.begin(), sans.end(), [&](const std::string& san) {
    return std::find(allowed.begin(), allowed.end(), san) != allowed.end();
  });
}

}  // namespace hucprof
