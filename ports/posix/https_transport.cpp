#include "https_transport.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "http_answer.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"

namespace blur {
namespace posix {

namespace {

void sleep_ms(uint32_t ms) {
  timespec t{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

}  // namespace

HttpsTransport::HttpsTransport() {
  mbedtls_ssl_config_init(&ssl_config_);
  mbedtls_x509_crt_init(&ca_);
  mbedtls_x509_crt_init(&client_cert_);
  mbedtls_pk_init(&client_key_);
}

HttpsTransport::~HttpsTransport() {
  mbedtls_pk_free(&client_key_);
  mbedtls_x509_crt_free(&client_cert_);
  mbedtls_x509_crt_free(&ca_);
  mbedtls_ssl_config_free(&ssl_config_);
}

int HttpsTransport::random(void* rng, unsigned char* out, size_t length) {
  return static_cast<Rng*>(rng)->fill(out, length) == Status::kOk ? 0 : -1;
}

Status HttpsTransport::init(const HttpsConfig& config, Rng* rng) {
  ready_ = false;
  if (rng == nullptr || !rng->seeded() || config.ca_file == nullptr || config.host == nullptr ||
      config.port == nullptr || config.max_attempts < 1 ||
      (config.client_cert_file == nullptr) != (config.client_key_file == nullptr)) {
    return Status::kInvalidArgument;
  }
  config_ = config;
  rng_ = rng;
  if (mbedtls_x509_crt_parse_file(&ca_, config.ca_file) != 0) {
    snprintf(last_error_, sizeof last_error_, "cannot load the CA from %s", config.ca_file);
    return Status::kInvalidArgument;
  }
  if (config.client_cert_file != nullptr &&
      (mbedtls_x509_crt_parse_file(&client_cert_, config.client_cert_file) != 0 ||
       mbedtls_pk_parse_keyfile(&client_key_, config.client_key_file, nullptr) != 0)) {
    snprintf(last_error_, sizeof last_error_, "cannot load the client certificate or key");
    return Status::kInvalidArgument;
  }
  if (mbedtls_ssl_config_defaults(&ssl_config_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                  MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
    return Status::kInvalidArgument;
  }
  mbedtls_ssl_conf_min_version(&ssl_config_, MBEDTLS_SSL_MAJOR_VERSION_3,
                               MBEDTLS_SSL_MINOR_VERSION_3);  // TLS 1.2
  mbedtls_ssl_conf_authmode(&ssl_config_, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&ssl_config_, &ca_, nullptr);
  mbedtls_ssl_conf_rng(&ssl_config_, &HttpsTransport::random, rng_);
  if (config.client_cert_file != nullptr &&
      mbedtls_ssl_conf_own_cert(&ssl_config_, &client_cert_, &client_key_) != 0) {
    return Status::kInvalidArgument;
  }
  ready_ = true;
  return Status::kOk;
}

Status HttpsTransport::attempt(const Exchange& exchange, int* http_status) {
  mbedtls_net_context socket;
  mbedtls_ssl_context ssl;
  mbedtls_net_init(&socket);
  mbedtls_ssl_init(&ssl);
  int ret = mbedtls_net_connect(&socket, config_.host, config_.port, MBEDTLS_NET_PROTO_TCP);
  if (ret == 0) ret = mbedtls_ssl_setup(&ssl, &ssl_config_);
  if (ret == 0) ret = mbedtls_ssl_set_hostname(&ssl, config_.host);
  if (ret == 0) {
    mbedtls_ssl_set_bio(&ssl, &socket, mbedtls_net_send, mbedtls_net_recv, nullptr);
    while ((ret = mbedtls_ssl_handshake(&ssl)) == MBEDTLS_ERR_SSL_WANT_READ ||
           ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
    }
  }
  // The request: headers, then the body, each written until done.
  char head[512];
  const int head_length =
      snprintf(head, sizeof head,
               "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\n%s%s%s"
               "Content-Length: %zu\r\nConnection: close\r\n\r\n",
               exchange.path, config_.host, exchange.content_type,
               exchange.bearer != nullptr ? "Authorization: Bearer " : "",
               exchange.bearer != nullptr ? exchange.bearer : "",
               exchange.bearer != nullptr ? "\r\n" : "", exchange.length);
  if (head_length < 0 || static_cast<size_t>(head_length) >= sizeof head) {
    snprintf(last_error_, sizeof last_error_, "request header too long");
    final_ = true;
    return Status::kInvalidArgument;
  }
  const uint8_t* parts[2] = {reinterpret_cast<const uint8_t*>(head), exchange.body};
  const size_t sizes[2] = {static_cast<size_t>(head_length), exchange.length};
  for (int part = 0; part < 2 && ret == 0; ++part) {
    for (size_t done = 0; done < sizes[part] && ret == 0;) {
      const int n = mbedtls_ssl_write(&ssl, parts[part] + done, sizes[part] - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n != MBEDTLS_ERR_SSL_WANT_READ && n != MBEDTLS_ERR_SSL_WANT_WRITE) {
        ret = n;
      }
    }
  }
  // The answer's first bytes: the status line ("HTTP/1.1 200 OK") and,
  // for an enrollment, the small JSON body. It is read as text, up to its
  // first NUL (HTTP's head and the JSON body have none).
  char* answer = exchange.answer;
  const size_t capacity = exchange.answer_capacity;
  answer[0] = '\0';
  size_t received = 0;
  while (ret == 0 && received < capacity - 1) {
    const int n = mbedtls_ssl_read(&ssl, reinterpret_cast<unsigned char*>(answer + received),
                                   capacity - 1 - received);
    if (n > 0) {
      received += static_cast<size_t>(n);
      answer[received] = '\0';
    } else if (n == 0 || n == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
      break;
    } else if (n != MBEDTLS_ERR_SSL_WANT_READ && n != MBEDTLS_ERR_SSL_WANT_WRITE) {
      ret = n;
    }
  }
  if (ret == 0) mbedtls_ssl_close_notify(&ssl);
  mbedtls_ssl_free(&ssl);
  mbedtls_net_free(&socket);
  if (ret != 0) {
    mbedtls_strerror(ret, last_error_, sizeof last_error_);
    *http_status = 0;
    // An untrusted server stays untrusted: no retry.
    final_ = ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED;
    return Status::kTransportFailure;
  }
  // An answer that is not HTTP counts as none (status 0): retried.
  const Result<HttpAnswer> parsed = parse_http_answer(answer, strlen(answer));
  const int code = parsed.ok() ? parsed.value().status : 0;
  *http_status = code;
  final_ = code >= 400 && code < 500;  // the collector's final word on this batch
  if (code != 200) {
    if (parsed.ok()) {
      printable_status_line(parsed.value(), last_error_, sizeof last_error_);
    } else {
      snprintf(last_error_, sizeof last_error_, "answer without a valid HTTP status line");
    }
    return Status::kTransportFailure;
  }
  return Status::kOk;
}

Status HttpsTransport::post_batch(const uint8_t* body, size_t length, int* http_status) {
  if (!ready_ || body == nullptr || http_status == nullptr) return Status::kInvalidArgument;
  char answer[512];
  return with_retries({"/v1/reports", "application/x-protobuf", config_.device_token, body,
                       length, answer, sizeof answer},
                      http_status);
}

Status HttpsTransport::enroll(const char* enrollment_secret, const Client& client, char* token,
                              size_t capacity, int* http_status) {
  if (!ready_ || enrollment_secret == nullptr || token == nullptr || http_status == nullptr ||
      capacity < kDeviceTokenCapacity) {
    return Status::kInvalidArgument;
  }
  // The token we have, if any, goes along: a nonce with reports but no key
  // bound needs it once. One the body cannot carry is left out.
  char body[kEnrollmentBodyWithTokenSize];
  if (config_.device_token == nullptr ||
      client.enrollment_body(body, sizeof body, config_.device_token) != Status::kOk) {
    BLUR_TRY(client.enrollment_body(body, sizeof body));
  }
  char answer[1024];
  BLUR_TRY(with_retries({"/v1/enroll", "application/json", enrollment_secret,
                         reinterpret_cast<const uint8_t*>(body), strlen(body), answer,
                         sizeof answer},
                        http_status));
  // attempt() parsed this answer already: its status was 200.
  const Result<HttpAnswer> parsed = parse_http_answer(answer, strlen(answer));
  if (!parsed.ok() || !parsed.value().head_complete ||
      parse_enrollment_token(parsed.value().body, token, capacity) != Status::kOk) {
    snprintf(last_error_, sizeof last_error_, "enrollment answer without a device token");
    return Status::kTransportFailure;
  }
  return Status::kOk;
}

Status HttpsTransport::enroll_with_config_secret(const Client& client, int* http_status) {
  // The body is written (with the old token) before token_ is overwritten.
  BLUR_TRY(enroll(config_.enrollment_secret, client, token_, sizeof token_, http_status));
  config_.device_token = token_;
  return Status::kOk;
}

Status HttpsTransport::post_batch_enrolled(const Client& client, const uint8_t* body,
                                           size_t length, int* http_status) {
  if (http_status == nullptr) return Status::kInvalidArgument;
  if (config_.enrollment_secret != nullptr && config_.device_token == nullptr) {
    BLUR_TRY(enroll_with_config_secret(client, http_status));
  }
  const Status posted = post_batch(body, length, http_status);
  if (posted == Status::kOk || *http_status != 401 || config_.enrollment_secret == nullptr) {
    return posted;
  }
  BLUR_TRY(enroll_with_config_secret(client, http_status));
  return post_batch(body, length, http_status);
}

Status HttpsTransport::with_retries(const Exchange& exchange, int* http_status) {
  uint32_t backoff = config_.initial_backoff_ms;
  attempts_ = 0;
  for (int i = 0; i < config_.max_attempts; ++i) {
    ++attempts_;
    final_ = false;
    if (attempt(exchange, http_status) == Status::kOk) return Status::kOk;
    if (final_) break;  // a 4xx, or a certificate that does not verify
    if (i + 1 < config_.max_attempts) {
      sleep_ms(backoff);
      backoff *= 2;
    }
  }
  return Status::kTransportFailure;
}

Status send_pending(Client& client, HttpsTransport& transport, size_t* sent) {
  if (sent == nullptr) return Status::kInvalidArgument;
  *sent = 0;
  static uint8_t batch[kBatchHeaderSize + kMaxReportsPerBatch * kMaxEncodedReportSize];
  for (;;) {
    size_t written = 0, count = 0;
    uint64_t token = 0;
    BLUR_TRY(client.pending_batch(batch, sizeof batch, &written, &count, &token));
    if (count == 0) return Status::kOk;
    int http_status = 0;
    BLUR_TRY(transport.post_batch_enrolled(client, batch, written, &http_status));
    BLUR_TRY(client.acknowledge(token));
    *sent += count;
  }
}

}  // namespace posix
}  // namespace blur
