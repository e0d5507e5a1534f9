// A blocking TLS client on OpenSSL for tests: connects to 127.0.0.1, verifies
// the server against a CA file (and its certificate against the address),
// optionally presents a client certificate, sends raw request bytes and
// reads until the server closes. Can resume an earlier session.
#ifndef BLUR_TESTS_COLLECTOR_TLS_CLIENT_H
#define BLUR_TESTS_COLLECTOR_TLS_CLIENT_H

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <memory>
#include <string>

#include "test_certificates.h"

namespace blur_test {

struct SessionFree {
  void operator()(SSL_SESSION* session) const { SSL_SESSION_free(session); }
};
using TlsSession = std::unique_ptr<SSL_SESSION, SessionFree>;

struct TlsExchange {
  bool handshake = false;  // SSL_connect completed (TLS 1.3: before the server
                           // has checked the client's certificate)
  bool resumed = false;
  std::string answer;  // every byte the server sent back
  std::string error;   // OpenSSL's errors, when something failed
  TlsSession session;  // to resume
};

struct TlsClientOptions {
  int port = 0;
  std::string ca_file;                  // trusted for the server
  const Credential* client = nullptr;   // the client certificate, if any
  int version = TLS1_3_VERSION;         // the only version offered
  const SSL_SESSION* resume = nullptr;  // a session of an earlier exchange
};

inline std::string openssl_errors() {
  std::string text;
  char line[256];
  while (const unsigned long code = ERR_get_error()) {
    ERR_error_string_n(code, line, sizeof line);
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text;
}

inline TlsExchange tls_exchange(const TlsClientOptions& options, const std::string& request) {
  TlsExchange result;
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> context(SSL_CTX_new(TLS_client_method()),
                                                            &SSL_CTX_free);
  if (!context || SSL_CTX_set_min_proto_version(context.get(), options.version) != 1 ||
      SSL_CTX_set_max_proto_version(context.get(), options.version) != 1 ||
      SSL_CTX_load_verify_locations(context.get(), options.ca_file.c_str(), nullptr) != 1) {
    result.error = "client setup: " + openssl_errors();
    return result;
  }
  SSL_CTX_set_verify(context.get(), SSL_VERIFY_PEER, nullptr);
  if (options.client != nullptr &&
      (SSL_CTX_use_certificate(context.get(), options.client->certificate.get()) != 1 ||
       SSL_CTX_use_PrivateKey(context.get(), options.client->key.get()) != 1)) {
    result.error = "client certificate: " + openssl_errors();
    return result;
  }
  BIO* connection = BIO_new_connect(("127.0.0.1:" + std::to_string(options.port)).c_str());
  if (connection == nullptr || BIO_do_connect(connection) != 1) {
    result.error = "connect: " + openssl_errors();
    BIO_free_all(connection);
    return result;
  }
  // A server that hangs fails the test instead of blocking it.
  const timeval timeout{10, 0};
  setsockopt(static_cast<int>(BIO_get_fd(connection, nullptr)), SOL_SOCKET, SO_RCVTIMEO, &timeout,
             sizeof timeout);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(context.get()), &SSL_free);
  if (!ssl) {
    BIO_free_all(connection);
    result.error = "SSL_new: " + openssl_errors();
    return result;
  }
  SSL_set_bio(ssl.get(), connection, connection);  // owned by `ssl` from here
  X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), "127.0.0.1");
  if (options.resume != nullptr) {
    SSL_set_session(ssl.get(), const_cast<SSL_SESSION*>(options.resume));
  }
  if (SSL_connect(ssl.get()) != 1) {
    result.error = "handshake: " + openssl_errors();
    return result;
  }
  result.handshake = true;
  result.resumed = SSL_session_reused(ssl.get()) == 1;
  if (SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())) <= 0) {
    result.error = "write: " + openssl_errors();
    return result;
  }
  char buffer[4096];
  for (;;) {
    const int n = SSL_read(ssl.get(), buffer, sizeof buffer);
    if (n <= 0) {
      const int reason = SSL_get_error(ssl.get(), n);
      if (reason != SSL_ERROR_ZERO_RETURN) {
        result.error = "read: " + openssl_errors();
        return result;
      }
      break;
    }
    result.answer.append(buffer, static_cast<std::size_t>(n));
  }
  // The server closed cleanly: the session stays resumable (SSL_free drops
  // the session of a connection not shut down) without writing to a socket
  // the server may have closed.
  SSL_set_shutdown(ssl.get(), SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  // After the reads: a TLS 1.3 server sends its session tickets after the
  // handshake.
  result.session.reset(SSL_get1_session(ssl.get()));
  return result;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_COLLECTOR_TLS_CLIENT_H
