// HMAC-SHA256 (RFC 2104, FIPS 198-1) over mbedTLS's SHA-256, without
// mbedTLS's MD layer (whose setup allocates). Known answers: RFC 4231.
#ifndef BLUR_HMAC_SHA256_H
#define BLUR_HMAC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "blur/status.h"

namespace blur {

inline constexpr size_t kHmacSha256Size = 32;

// out = HMAC-SHA256(key, message_1 || message_2) (message_2 may be empty):
// the two parts let callers MAC a fixed prefix and a counter without a copy.
// kCryptoFailure if SHA-256 fails, kInvalidArgument for null pointers.
Status hmac_sha256(const uint8_t* key, size_t key_length, const uint8_t* message_1, size_t length_1,
                   const uint8_t* message_2, size_t length_2, uint8_t out[kHmacSha256Size]);

}  // namespace blur

#endif  // BLUR_HMAC_SHA256_H
