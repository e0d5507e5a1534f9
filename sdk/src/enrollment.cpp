#include "blur/enrollment.h"

#include <string.h>

#include "little_endian.h"
#include "mbedtls/platform_util.h"

namespace blur {

namespace {

constexpr char kLabel[] = "blur.enroll.v1";  // the domain of the derivation
constexpr char kHex[] = "0123456789abcdef";
constexpr char kHead[] = "{\"device_nonce\":\"";
constexpr char kKey[] = "\",\"device_key\":\"";
constexpr char kToken[] = "\",\"device_token\":\"";
constexpr char kTail[] = "\"}";
static_assert(sizeof kHead - 1 + 16 + sizeof kKey - 1 + 2 * kDeviceKeySize + sizeof kTail - 1 + 1 ==
                  kEnrollmentBodySize,
              "kEnrollmentBodySize");
static_assert(sizeof kToken - 1 == 18, "kEnrollmentBodyWithTokenSize");

bool token_character(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

// Appends `text` (without its NUL) at *at.
void put(char* buffer, size_t* at, const char* text) {
  for (; *text != '\0'; ++text) buffer[(*at)++] = *text;
}

void put_hex(char* buffer, size_t* at, const uint8_t* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    buffer[(*at)++] = kHex[bytes[i] >> 4];
    buffer[(*at)++] = kHex[bytes[i] & 15];
  }
}

}  // namespace

Status derive_device_key(const uint8_t secret[kEnrollmentSecretSize], uint64_t device_nonce,
                         uint8_t key[kDeviceKeySize]) {
  if (secret == nullptr || key == nullptr) return Status::kInvalidArgument;
  uint8_t nonce[8];
  store_le64(nonce, device_nonce);
  return hmac_sha256(secret, kEnrollmentSecretSize, reinterpret_cast<const uint8_t*>(kLabel),
                     sizeof kLabel - 1, nonce, sizeof nonce, key);
}

Status write_enrollment_body(uint64_t device_nonce, const uint8_t secret[kEnrollmentSecretSize],
                             const char* device_token, char* buffer, size_t capacity) {
  if (secret == nullptr || buffer == nullptr) return Status::kInvalidArgument;
  size_t token_length = 0;
  if (device_token != nullptr) {
    while (token_length <= kMaxDeviceTokenLength && device_token[token_length] != '\0') {
      if (!token_character(device_token[token_length])) return Status::kInvalidArgument;
      ++token_length;
    }
    if (token_length == 0 || token_length > kMaxDeviceTokenLength) {
      return Status::kInvalidArgument;
    }
  }
  const size_t size =
      device_token == nullptr ? kEnrollmentBodySize : kEnrollmentBodySize + 18 + token_length;
  if (capacity < size) return Status::kBufferTooSmall;
  uint8_t key[kDeviceKeySize];
  BLUR_TRY(derive_device_key(secret, device_nonce, key));
  uint8_t nonce[8];
  for (int i = 0; i < 8; ++i) nonce[i] = static_cast<uint8_t>(device_nonce >> (56 - 8 * i));
  size_t at = 0;
  put(buffer, &at, kHead);
  put_hex(buffer, &at, nonce, sizeof nonce);
  put(buffer, &at, kKey);
  put_hex(buffer, &at, key, sizeof key);
  mbedtls_platform_zeroize(key, sizeof key);
  if (device_token != nullptr) {
    put(buffer, &at, kToken);
    memcpy(buffer + at, device_token, token_length);
    at += token_length;
  }
  put(buffer, &at, kTail);
  buffer[at] = '\0';
  return Status::kOk;
}

}  // namespace blur
