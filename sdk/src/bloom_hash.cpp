#include "blur/mechanisms/bloom_hash.h"

#include "little_endian.h"
#include "mbedtls/sha256.h"

namespace blur {

namespace {
constexpr char kTag[] = "blur.bloom.v1";
}  // namespace

Status bloom_positions(BloomHashKey key, uint32_t cohort, const uint8_t* value, size_t length,
                       uint32_t bloom_bits, uint32_t hash_count, uint16_t* positions) {
  if (bloom_bits < 8 || bloom_bits > 65536 || (bloom_bits & (bloom_bits - 1)) != 0 ||
      hash_count == 0 || hash_count > kMaxBloomHashes || positions == nullptr ||
      (value == nullptr && length != 0) || length > UINT32_MAX) {
    return Status::kInvalidArgument;
  }
  uint8_t header[4 + 8 + 4 + 4];
  store_le32(header, key.metric_id);
  store_le64(header + 4, key.hash_key);
  store_le32(header + 12, cohort);
  store_le32(header + 16, static_cast<uint32_t>(length));
  uint8_t digest[32];
  mbedtls_sha256_context sha;
  mbedtls_sha256_init(&sha);
  const bool ok = mbedtls_sha256_starts_ret(&sha, 0) == 0 &&
                  mbedtls_sha256_update_ret(&sha, reinterpret_cast<const uint8_t*>(kTag),
                                            sizeof kTag - 1) == 0 &&
                  mbedtls_sha256_update_ret(&sha, header, sizeof header) == 0 &&
                  (length == 0 || mbedtls_sha256_update_ret(&sha, value, length) == 0) &&
                  mbedtls_sha256_finish_ret(&sha, digest) == 0;
  mbedtls_sha256_free(&sha);
  if (!ok) return Status::kCryptoFailure;
  for (uint32_t j = 0; j < hash_count; ++j) {
    const uint32_t word =
        static_cast<uint32_t>(digest[2 * j]) | static_cast<uint32_t>(digest[2 * j + 1]) << 8;
    positions[j] = static_cast<uint16_t>(word & (bloom_bits - 1));
  }
  return Status::kOk;
}

size_t decimal_text(uint32_t value, char out[10]) {
  char reversed[10];
  size_t length = 0;
  do {
    reversed[length++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (size_t i = 0; i < length; ++i) out[i] = reversed[length - 1 - i];
  return length;
}

}  // namespace blur
