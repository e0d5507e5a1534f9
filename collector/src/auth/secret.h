// Secrets the collector makes and checks: 256 random bits from the kernel,
// their hex spelling, SHA-256 digests and a constant-time comparison.
#ifndef BLUR_COLLECTOR_AUTH_SECRET_H
#define BLUR_COLLECTOR_AUTH_SECRET_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/outcome.h"

namespace blur::collector::auth {

using Digest = std::array<uint8_t, 32>;

// 32 bytes from getrandom(2); kUnavailable if the kernel cannot give them
// (fail closed: no credential is made from weaker randomness).
Outcome<Digest> random_secret();

// SHA-256 of `text`. Stored credentials are these digests of the tokens:
// a token is 256 random bits, so a plain hash is as hard to invert as the
// token is to guess (no slow password hash needed, unlike for passwords).
Digest sha256(std::string_view text);

std::string to_hex(const uint8_t* bytes, size_t size);
inline std::string to_hex(const Digest& digest) { return to_hex(digest.data(), digest.size()); }
// Up to 16 lower-case hex digits as a number (one token, one spelling);
// false for any other character.
bool read_hex(std::string_view text, uint64_t* value);
// Exactly 64 lower-case hex digits, else nullopt.
std::optional<Digest> digest_from_hex(std::string_view hex);

// Compares in time independent of where the inputs differ.
bool equal_in_constant_time(const uint8_t* a, const uint8_t* b, size_t size);
inline bool equal_in_constant_time(const Digest& a, const Digest& b) {
  return equal_in_constant_time(a.data(), b.data(), a.size());
}

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_SECRET_H
