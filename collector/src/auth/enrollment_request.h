// The body of POST /v1/enroll (Content-Type: application/json):
//
//   {"device_nonce": "<16 lower-case hex digits>"}
//
// and of its answer: {"token": "bt1-...", "device_nonce": "...",
// "expires_at": <Unix s>, "expires": "<RFC 3339>"}. Untrusted bytes: any
// other shape is kInvalid naming what is wrong, without echoing the body.
#ifndef BLUR_COLLECTOR_AUTH_ENROLLMENT_REQUEST_H
#define BLUR_COLLECTOR_AUTH_ENROLLMENT_REQUEST_H

#include <cstdint>
#include <string>
#include <string_view>

#include "auth/authenticator.h"
#include "util/outcome.h"

namespace blur::collector::auth {

inline constexpr size_t kMaxEnrollmentRequestBytes = 256;

// The device nonce the request names.
Outcome<uint64_t> parse_enrollment_request(std::string_view body);

std::string enrollment_answer(const Enrollment& enrollment);

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_ENROLLMENT_REQUEST_H
