// A Linux device that records binary randomized-response values and sends
// its pending reports to the collector over HTTPS (ports/posix: getrandom,
// a storage file, the mbedTLS transport). Used by https_transport_test.sh.
//
//   https_send STORAGE HOST PORT CA_FILE RECORD_COUNT
//              [--client-cert PEM --client-key PEM]
// With $BLUR_ENROLLMENT_SECRET set, the device enrolls (POST /v1/enroll
// over the same transport, with its device key) and sends its device
// token; $BLUR_DEVICE_TOKEN is a token to start with (the transport enrolls
// again if the collector answers 401).
// Prints "device NONCE" (16 hex digits: what a device certificate binds),
// then "sent N pending P" on success; "failed: ... pending P" (exit 1).
// With RECORD_COUNT 0, nothing pending and no enrollment it provisions the
// device and connects nowhere.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "blur/client.h"
#include "https_transport.h"
#include "posix_port.h"

int main(int argc, char** argv) {
  const char* client_cert = nullptr;
  const char* client_key = nullptr;
  bool usage = argc < 6 || argc % 2 != 0;
  for (int i = 6; !usage && i < argc; i += 2) {
    if (strcmp(argv[i], "--client-cert") == 0) {
      client_cert = argv[i + 1];
    } else if (strcmp(argv[i], "--client-key") == 0) {
      client_key = argv[i + 1];
    } else {
      usage = true;
    }
  }
  if (usage || (client_cert == nullptr) != (client_key == nullptr)) {
    fprintf(stderr,
            "usage: https_send STORAGE HOST PORT CA_FILE RECORD_COUNT "
            "[--client-cert PEM --client-key PEM]\n");
    return 2;
  }
  static blur::posix::PosixPort posix;
  if (posix.open(argv[1], 512, 8) != blur::Status::kOk) {
    fprintf(stderr, "cannot open %s\n", argv[1]);
    return 2;
  }
  static blur::Client client;
  blur::Status status = client.open(posix.port());
  if (status == blur::Status::kNotProvisioned) {
    blur::LedgerPolicy policy;
    policy.lifetime_cap_micros = 1000 * uint64_t{blur::kEpsilonMicrosPerNat};
    status = client.provision(policy);
  }
  if (status == blur::Status::kOk) {
    status = client.add_metric(1, blur::MechanismId::kBinaryRandomizedResponse, 1000000, 2);
  }
  for (int i = 0; i < atoi(argv[5]) && status == blur::Status::kOk; ++i) {
    status = client.record(1, i % 2);
  }
  if (status != blur::Status::kOk) {
    fprintf(stderr, "device: %s\n", blur::status_name(status));
    return 2;
  }
  printf("device %016llx\n", static_cast<unsigned long long>(client.ledger().device_nonce()));
  static blur::Rng tls_rng;  // the TLS handshake's randomness, from the same entropy port
  static const uint8_t kName[] = "blur-https";
  if (tls_rng.seed(posix.port(), kName, sizeof kName - 1) != blur::Status::kOk) return 2;
  blur::posix::HttpsConfig config;
  config.host = argv[2];
  config.port = argv[3];
  config.ca_file = argv[4];
  config.client_cert_file = client_cert;
  config.client_key_file = client_key;
  config.max_attempts = 3;
  config.initial_backoff_ms = 50;
  config.enrollment_secret = getenv("BLUR_ENROLLMENT_SECRET");
  config.device_token = getenv("BLUR_DEVICE_TOKEN");
  static blur::posix::HttpsTransport transport;
  if (transport.init(config, &tls_rng) != blur::Status::kOk) {
    fprintf(stderr, "transport: %s\n", transport.last_error());
    return 2;
  }
  size_t sent = 0;
  status = blur::posix::send_pending(client, transport, &sent);
  if (status != blur::Status::kOk) {
    printf("failed after %d attempts: %s; sent %zu pending %u\n", transport.attempts(),
           transport.last_error(), sent, client.queue().pending_count());
    return 1;
  }
  printf("sent %zu pending %u\n", sent, client.queue().pending_count());
  return 0;
}
