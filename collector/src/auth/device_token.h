// Device tokens: what a device without a certificate presents on every POST
// (Authorization: Bearer <token>) to prove which device nonce it is. The
// collector issues one at enrollment; it is a MAC by a collector key over the
// device nonce and an expiry, so checking it needs no database lookup:
//
//   bt1-KKKKKKKK-NNNNNNNNNNNNNNNN-EEEEEEEEEEEEEEEE-MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM
//       key id    device nonce     expiry (Unix s)  HMAC-SHA256, first 16 bytes
//
// (lower-case hex, fixed length). The MAC covers "blur-device-token-v1",
// the key id, the nonce and the expiry (RFC 2104 HMAC over SHA-256, truncated
// to 128 bits as RFC 2104 section 5 allows). Keys rotate without
// invalidating every device at once: a KeyRing issues with its newest key
// and accepts every key it still holds, so devices move to the new key as
// they renew; an old key is dropped once the tokens it signed have expired.
#ifndef BLUR_COLLECTOR_AUTH_DEVICE_TOKEN_H
#define BLUR_COLLECTOR_AUTH_DEVICE_TOKEN_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/outcome.h"

namespace blur::collector::auth {

struct DeviceTokenKey {
  uint32_t id = 0;
  std::array<uint8_t, 32> secret{};
};

// What a valid token says.
struct DeviceClaims {
  uint32_t key_id = 0;
  uint64_t device_nonce = 0;
  int64_t expires_at = 0;  // Unix seconds
};

inline constexpr size_t kDeviceTokenLength = 4 + 8 + 1 + 16 + 1 + 16 + 1 + 32;

std::string issue_device_token(const DeviceTokenKey& key, uint64_t device_nonce,
                               int64_t expires_at);

// The token's fields if it has the exact form above (nothing verified yet):
// kInvalid naming what is wrong otherwise. Untrusted text.
Outcome<DeviceClaims> parse_device_token(std::string_view token);

class KeyRing {
 public:
  // Refuses an empty list, and two keys with one id.
  static Outcome<KeyRing> create(std::vector<DeviceTokenKey> keys);

  // Signs with the key of the largest id.
  std::string issue(uint64_t device_nonce, int64_t expires_at) const;
  // The claims of a well-formed token signed by a key of this ring and not
  // expired at `now`; kUnauthenticated saying which check failed otherwise
  // (never echoing the token).
  Outcome<DeviceClaims> verify(std::string_view token, int64_t now) const;
  // The same without the expiry: whether this ring signed the token, for
  // enrollment's proof that a requester is the device it names (an expired
  // token proves that as well as a valid one).
  Outcome<DeviceClaims> verify_signature(std::string_view token) const;

  const std::vector<DeviceTokenKey>& keys() const { return keys_; }

 private:
  explicit KeyRing(std::vector<DeviceTokenKey> keys) : keys_(std::move(keys)) {}
  std::vector<DeviceTokenKey> keys_;  // by increasing id
};

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_DEVICE_TOKEN_H
