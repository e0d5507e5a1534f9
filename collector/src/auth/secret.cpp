#include "auth/secret.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "mbedtls/sha256.h"

namespace blur::collector::auth {

Outcome<Digest> random_secret() {
  Digest out{};
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = getrandom(out.data() + got, out.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unavailable(std::string("getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(n);
  }
  return out;
}

Digest sha256(std::string_view text) {
  Digest out{};
  // Cannot fail for SHA-256 (not SHA-224) on memory input.
  (void)mbedtls_sha256_ret(reinterpret_cast<const unsigned char*>(text.data()), text.size(),
                           out.data(), 0);
  return out;
}

std::string to_hex(const uint8_t* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

bool read_hex(std::string_view text, uint64_t* value) {
  if (text.size() > 16) return false;
  uint64_t v = 0;
  for (const char c : text) {
    int digit;
    if (c >= '0' && c <= '9') {
      digit = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      digit = c - 'a' + 10;
    } else {
      return false;
    }
    v = v << 4 | static_cast<uint64_t>(digit);
  }
  *value = v;
  return true;
}

std::optional<Digest> digest_from_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Digest out{};
  for (size_t i = 0; i < out.size(); ++i) {
    uint64_t byte = 0;
    if (!read_hex(hex.substr(2 * i, 2), &byte)) return std::nullopt;
    out[i] = static_cast<uint8_t>(byte);
  }
  return out;
}

bool equal_in_constant_time(const uint8_t* a, const uint8_t* b, size_t size) {
  uint8_t diff = 0;
  for (size_t i = 0; i < size; ++i) diff |= static_cast<uint8_t>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace blur::collector::auth
