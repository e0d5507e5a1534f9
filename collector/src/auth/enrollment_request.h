// The body of POST /v1/enroll (Content-Type: application/json), what the
// SDK writes (sdk/include/blur/enrollment.h):
//
//   {"device_nonce": "<16 lower-case hex digits>",
//    "device_key": "<64 lower-case hex digits>",
//    "device_token": "bt1-..."}                      (optional)
//
// device_key: HMAC-SHA256(device secret, "blur.enroll.v1" || nonce), the
// proof that binds the nonce to the device (docs/collector.md). device_token:
// a token the collector issued this nonce before, the proof a nonce with
// reports but no key yet needs. The answer: {"token": "bt1-...",
// "device_nonce": "...", "expires_at": <Unix s>, "expires": "<RFC 3339>"}.
// Untrusted bytes: any other shape is kInvalid naming what is wrong,
// without echoing the body; a body without device_key (an SDK before device
// keys) is told so.
#ifndef BLUR_COLLECTOR_AUTH_ENROLLMENT_REQUEST_H
#define BLUR_COLLECTOR_AUTH_ENROLLMENT_REQUEST_H

#include <cstdint>
#include <string>
#include <string_view>

#include "auth/secret.h"
#include "util/outcome.h"

namespace blur::collector::auth {

inline constexpr size_t kMaxEnrollmentRequestBytes = 512;
// The longest device_token accepted (the SDK's kMaxDeviceTokenLength).
inline constexpr size_t kMaxEnrollmentTokenLength = 128;

struct EnrollmentRequest {
  uint64_t device_nonce = 0;
  Digest device_key{};       // the key itself (32 bytes), not its digest
  std::string device_token;  // "" when absent
};

struct Enrollment {
  std::string token;
  uint64_t device_nonce = 0;
  int64_t expires_at = 0;
  // Not sent: a device known before (a renewal, or a device from before
  // device keys binding its key), not a new one. For /metrics.
  bool renewal = false;
};

Outcome<EnrollmentRequest> parse_enrollment_request(std::string_view body);

std::string enrollment_answer(const Enrollment& enrollment);

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_ENROLLMENT_REQUEST_H
