#include "auth/device_token.h"

#include <algorithm>

#include "auth/secret.h"
#include "mbedtls/md.h"

namespace blur::collector::auth {

namespace {

constexpr std::string_view kPrefix = "bt1-";
constexpr std::string_view kDomain = "blur-device-token-v1";
constexpr size_t kMacBytes = 16;

void put_hex(std::string* out, uint64_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4)
    out->push_back(kHex[(value >> shift) & 15]);
}

std::array<uint8_t, kMacBytes> mac(const DeviceTokenKey& key, const DeviceClaims& claims) {
  uint8_t message[kDomain.size() + 4 + 8 + 8];
  std::copy(kDomain.begin(), kDomain.end(), message);
  size_t at = kDomain.size();
  for (int i = 3; i >= 0; --i) message[at++] = static_cast<uint8_t>(claims.key_id >> (8 * i));
  for (int i = 7; i >= 0; --i) message[at++] = static_cast<uint8_t>(claims.device_nonce >> (8 * i));
  const auto expiry = static_cast<uint64_t>(claims.expires_at);
  for (int i = 7; i >= 0; --i) message[at++] = static_cast<uint8_t>(expiry >> (8 * i));
  uint8_t full[32] = {};
  // SHA-256 is compiled into the host mbedTLS; HMAC cannot fail otherwise.
  (void)mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key.secret.data(),
                        key.secret.size(), message, sizeof message, full);
  std::array<uint8_t, kMacBytes> out{};
  std::copy(full, full + kMacBytes, out.begin());
  return out;
}


}  // namespace

std::string issue_device_token(const DeviceTokenKey& key, uint64_t device_nonce,
                               int64_t expires_at) {
  const DeviceClaims claims{key.id, device_nonce, expires_at};
  std::string token(kPrefix);
  put_hex(&token, key.id, 8);
  token.push_back('-');
  put_hex(&token, device_nonce, 16);
  token.push_back('-');
  put_hex(&token, static_cast<uint64_t>(expires_at), 16);
  token.push_back('-');
  for (const uint8_t byte : mac(key, claims)) put_hex(&token, byte, 2);
  return token;
}

Outcome<DeviceClaims> parse_device_token(std::string_view token) {
  if (token.size() != kDeviceTokenLength)
    return invalid("a device token has " + std::to_string(kDeviceTokenLength) + " characters");
  if (token.substr(0, kPrefix.size()) != kPrefix) return invalid("a device token starts with bt1-");
  if (token[12] != '-' || token[29] != '-' || token[46] != '-') {
    return invalid("a device token's fields are separated by '-'");
  }
  uint64_t key_id = 0, nonce = 0, expiry = 0, ignored = 0;
  if (!read_hex(token.substr(4, 8), &key_id) || !read_hex(token.substr(13, 16), &nonce) ||
      !read_hex(token.substr(30, 16), &expiry) || !read_hex(token.substr(47, 16), &ignored) ||
      !read_hex(token.substr(63, 16), &ignored)) {
    return invalid("a device token's fields are lower-case hexadecimal");
  }
  return DeviceClaims{static_cast<uint32_t>(key_id), nonce, static_cast<int64_t>(expiry)};
}

Outcome<KeyRing> KeyRing::create(std::vector<DeviceTokenKey> keys) {
  if (keys.empty()) return invalid("a device token key ring needs at least one key");
  std::sort(keys.begin(), keys.end(),
            [](const DeviceTokenKey& a, const DeviceTokenKey& b) { return a.id < b.id; });
  for (size_t i = 1; i < keys.size(); ++i) {
    if (keys[i].id == keys[i - 1].id) {
      return invalid("two device token keys have the id " + std::to_string(keys[i].id));
    }
  }
  return KeyRing(std::move(keys));
}

std::string KeyRing::issue(uint64_t device_nonce, int64_t expires_at) const {
  return issue_device_token(keys_.back(), device_nonce, expires_at);
}

Outcome<DeviceClaims> KeyRing::verify(std::string_view token, int64_t now) const {
  auto claims = verify_signature(token);
  if (!claims) return claims;
  if (claims->expires_at <= now) return unauthenticated("device token expired; enroll again");
  return claims;
}

Outcome<DeviceClaims> KeyRing::verify_signature(std::string_view token) const {
  auto claims = parse_device_token(token);
  if (!claims) return unauthenticated("malformed device token: " + claims.error().message);
  const auto key = std::find_if(keys_.begin(), keys_.end(),
                                [&](const DeviceTokenKey& k) { return k.id == claims->key_id; });
  if (key == keys_.end()) {
    return unauthenticated("device token signed by a retired or unknown key; enroll again");
  }
  const std::array<uint8_t, kMacBytes> expected = mac(*key, claims.value());
  // Constant time: the comparison does not tell an attacker how much matched.
  uint8_t difference = 0;
  for (size_t i = 0; i < kMacBytes; ++i) {
    uint64_t byte = 0;
    (void)read_hex(token.substr(47 + 2 * i, 2), &byte);
    difference |= static_cast<uint8_t>(byte) ^ expected[i];
  }
  if (difference != 0) return unauthenticated("device token signature does not verify");
  return claims;
}

}  // namespace blur::collector::auth
