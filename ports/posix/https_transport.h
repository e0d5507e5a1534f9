// ports/posix: the HTTPS client that takes a device's pending reports to
// the collector, with mbedTLS (TLS 1.2 or newer; the server certificate is
// verified against the CA the app gives, and its name against `host`;
// optional client certificate). A collector that requires devices to prove
// who they are takes either the client certificate (from the fleet's CA) or
// a device token: enroll() gets one with the app's enrollment secret, and
// every POST then carries it (Authorization: Bearer). One POST /v1/reports
// per batch; a batch is
// acknowledged in the queue only after the collector answered 200 (it
// answers after its commit). Connection failures and 5xx answers are
// retried with exponential backoff; a 4xx answer (the batch is malformed
// or not for this collector) and a certificate that does not verify are
// final: retrying cannot help.
#ifndef BLUR_PORTS_POSIX_HTTPS_TRANSPORT_H
#define BLUR_PORTS_POSIX_HTTPS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/client.h"
#include "blur/sampling/rng.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

namespace blur {
namespace posix {

struct HttpsConfig {
  const char* host = "localhost";  // also the name the certificate must carry
  const char* port = "8443";
  const char* ca_file = nullptr;           // PEM: the CA that signed the collector's certificate
  const char* client_cert_file = nullptr;  // optional PEM client certificate...
  const char* client_key_file = nullptr;   // ...and its key
  // The device token (from enroll(); the app keeps it, e.g. in a file).
  // nullptr: none sent, until an enrollment.
  const char* device_token = nullptr;
  // The app's enrollment secret. With it, send_pending() enrolls the device
  // when it has no token, and again when the collector answers 401, then
  // sends the batch once more; device_token() is then the new token.
  const char* enrollment_secret = nullptr;
  int max_attempts = 5;
  uint32_t initial_backoff_ms = 100;  // doubled after each failed attempt
};

class HttpsTransport {
 public:
  HttpsTransport();
  ~HttpsTransport();
  HttpsTransport(const HttpsTransport&) = delete;
  HttpsTransport& operator=(const HttpsTransport&) = delete;

  // Loads the CA (and client certificate); TLS randomness comes from `rng`.
  // kInvalidArgument for unreadable or invalid PEM files.
  Status init(const HttpsConfig& config, Rng* rng);

  // POSTs `body` to /v1/reports. kOk with *http_status = 200;
  // kTransportFailure otherwise (*http_status: the last answer, 0 if none).
  Status post_batch(const uint8_t* body, size_t length, int* http_status);

  // POST /v1/enroll with the app's enrollment secret and `client`'s body
  // (Client::enrollment_body: its nonce and device key, and the token sent
  // now, if any: the proof a device that reported before device keys
  // needs): the device token, NUL-terminated, into `token`
  // (kDeviceTokenCapacity bytes). Retried like post_batch; a 409 (the nonce
  // is another device's) is final.
  static constexpr size_t kDeviceTokenCapacity = 80;
  Status enroll(const char* enrollment_secret, const Client& client, char* token,
                size_t capacity, int* http_status);
  // Sends `token` (owned by the caller, kept alive) on every later POST.
  void set_device_token(const char* token) { config_.device_token = token; }
  // The token sent now (the app's, or the one send_pending() enrolled for:
  // keep it for the next run). nullptr: none.
  const char* device_token() const { return config_.device_token; }

  // post_batch() with the enrollments HttpsConfig::enrollment_secret asks
  // for: one first when there is no token, one after a 401 (then the batch
  // is posted once more).
  Status post_batch_enrolled(const Client& client, const uint8_t* body, size_t length,
                             int* http_status);

  // Why the last attempt failed (mbedTLS's error text, or the status line).
  const char* last_error() const { return last_error_; }
  int attempts() const { return attempts_; }

 private:
  // One request and where its answer goes.
  struct Exchange {
    const char* path;
    const char* content_type;
    const char* bearer;  // the Authorization: Bearer credential, or nullptr
    const uint8_t* body;
    size_t length;
    char* answer;  // the answer's first bytes, NUL-terminated
    size_t answer_capacity;
  };
  Status attempt(const Exchange& exchange, int* http_status);
  Status with_retries(const Exchange& exchange, int* http_status);
  Status enroll_with_config_secret(const Client& client, int* http_status);
  static int random(void* rng, unsigned char* out, size_t length);

  HttpsConfig config_{};
  Rng* rng_ = nullptr;
  bool ready_ = false;
  mbedtls_ssl_config ssl_config_;
  mbedtls_x509_crt ca_;
  mbedtls_x509_crt client_cert_;
  mbedtls_pk_context client_key_;
  char last_error_[160] = {};
  int attempts_ = 0;
  bool final_ = false;  // the last failure cannot be cured by retrying
  char token_[kDeviceTokenCapacity] = {};  // post_batch_enrolled()'s enrollments
};

// Sends every pending batch of `client` (post_batch_enrolled: enrolling as
// the configuration asks) and acknowledges each one the collector stored.
// *sent: reports acknowledged. Stops at the first batch that fails (its
// reports stay queued for the next call).
Status send_pending(Client& client, HttpsTransport& transport, size_t* sent);

}  // namespace posix
}  // namespace blur

#endif  // BLUR_PORTS_POSIX_HTTPS_TRANSPORT_H
