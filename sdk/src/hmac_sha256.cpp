#include "blur/sampling/hmac_sha256.h"

#include <string.h>

#include "mbedtls/platform_util.h"
#include "mbedtls/sha256.h"

namespace blur {

namespace {
constexpr size_t kBlock = 64;  // SHA-256 block size

bool sha256_parts(const uint8_t* a, size_t a_length, const uint8_t* b, size_t b_length,
                  const uint8_t* c, size_t c_length, uint8_t out[32]) {
  mbedtls_sha256_context sha;
  mbedtls_sha256_init(&sha);
  const bool ok = mbedtls_sha256_starts_ret(&sha, 0) == 0 &&
                  mbedtls_sha256_update_ret(&sha, a, a_length) == 0 &&
                  (b_length == 0 || mbedtls_sha256_update_ret(&sha, b, b_length) == 0) &&
                  (c_length == 0 || mbedtls_sha256_update_ret(&sha, c, c_length) == 0) &&
                  mbedtls_sha256_finish_ret(&sha, out) == 0;
  mbedtls_sha256_free(&sha);
  return ok;
}
}  // namespace

Status hmac_sha256(const uint8_t* key, size_t key_length, const uint8_t* message_1, size_t length_1,
                   const uint8_t* message_2, size_t length_2, uint8_t out[kHmacSha256Size]) {
  if ((key == nullptr && key_length != 0) || (message_1 == nullptr && length_1 != 0) ||
      (message_2 == nullptr && length_2 != 0) || out == nullptr) {
    return Status::kInvalidArgument;
  }
  // K0: the key, hashed if longer than a block, zero-padded to a block.
  uint8_t k0[kBlock] = {};
  if (key_length > kBlock) {
    if (!sha256_parts(key, key_length, nullptr, 0, nullptr, 0, k0)) return Status::kCryptoFailure;
  } else if (key_length > 0) {
    memcpy(k0, key, key_length);
  }
  uint8_t pad[kBlock];
  for (size_t i = 0; i < kBlock; ++i) pad[i] = static_cast<uint8_t>(k0[i] ^ 0x36);
  uint8_t inner[32];
  bool ok = sha256_parts(pad, kBlock, message_1, length_1, message_2, length_2, inner);
  for (size_t i = 0; i < kBlock; ++i) pad[i] = static_cast<uint8_t>(k0[i] ^ 0x5c);
  ok = ok && sha256_parts(pad, kBlock, inner, sizeof inner, nullptr, 0, out);
  mbedtls_platform_zeroize(k0, sizeof k0);
  mbedtls_platform_zeroize(pad, sizeof pad);
  mbedtls_platform_zeroize(inner, sizeof inner);
  return ok ? Status::kOk : Status::kCryptoFailure;
}

}  // namespace blur
