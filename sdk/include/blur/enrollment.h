// What a device sends to a collector's POST /v1/enroll: its nonce and a key
// only it can compute, so that nobody else holding the app's enrollment
// secret can take its identity.
//
//   device key = HMAC-SHA256(device secret, "blur.enroll.v1" || device nonce (LE64))
//
// The device secret is the ledger's 32 random bytes drawn at provisioning
// (the one permanent_stream.h uses); HMAC is one-way, so the collector
// never learns the secret, and it keeps only SHA-256(device key). The
// first enrollment of a nonce binds it to the key; a later one with the
// same key is a renewal, with another key it is refused (docs/collector.md).
//
// The body, JSON without spaces, NUL-terminated:
//   {"device_nonce":"<16 hex>","device_key":"<64 hex>"}
//   {"device_nonce":"<16 hex>","device_key":"<64 hex>","device_token":"<token>"}
// The second form carries the device token a collector issued before
// device keys existed: a nonce that has reports but no key yet is bound
// only with that proof. Lower-case hex; no heap, no floating point.
#ifndef BLUR_ENROLLMENT_H
#define BLUR_ENROLLMENT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/sampling/hmac_sha256.h"
#include "blur/status.h"

namespace blur {

inline constexpr size_t kDeviceKeySize = kHmacSha256Size;
inline constexpr size_t kEnrollmentSecretSize = 32;  // the ledger's device secret
// The longest device token the body carries (the collector's are 79
// characters: [0-9a-z-]).
inline constexpr size_t kMaxDeviceTokenLength = 128;
// The body's size with its NUL, without and with a device token of the
// longest length.
inline constexpr size_t kEnrollmentBodySize = 17 + 16 + 16 + 64 + 2 + 1;
inline constexpr size_t kEnrollmentBodyWithTokenSize =
    kEnrollmentBodySize + 18 + kMaxDeviceTokenLength;

// key = the device key above. kInvalidArgument for null pointers,
// kCryptoFailure if SHA-256 fails.
Status derive_device_key(const uint8_t secret[kEnrollmentSecretSize], uint64_t device_nonce,
                         uint8_t key[kDeviceKeySize]);

// Writes the body above into `buffer` (NUL-terminated); `device_token` may be
// null (the first form). kBufferTooSmall if it does not fit `capacity`;
// kInvalidArgument for null pointers, an empty token, one longer than
// kMaxDeviceTokenLength or with a character outside [0-9A-Za-z._~+/=-]
// (it is copied into JSON unescaped). The key is wiped from the stack.
Status write_enrollment_body(uint64_t device_nonce, const uint8_t secret[kEnrollmentSecretSize],
                             const char* device_token, char* buffer, size_t capacity);

}  // namespace blur

#endif  // BLUR_ENROLLMENT_H
