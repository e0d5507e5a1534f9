// libFuzzer: the device token parser and verifier (auth/device_token.h) on
// any bytes: no crash; a token that parses re-issues to the same fields;
// nothing but a token this ring issued verifies.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "auth/device_token.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace blur::collector::auth;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  DeviceTokenKey key;
  key.id = 1;
  key.secret.fill(0x5a);
  static const auto ring = KeyRing::create({key});
  const auto parsed = parse_device_token(input);
  if (parsed && parsed->key_id == 1) {
    const auto reissued = issue_device_token(key, parsed->device_nonce, parsed->expires_at);
    if (reissued.compare(0, 47, input.substr(0, 47)) != 0) __builtin_trap();
    // Only the real signature verifies, and only before its expiry.
    const bool verifies = static_cast<bool>(ring->verify(input, -1));
    if (verifies != (reissued == input && parsed->expires_at > -1)) __builtin_trap();
  } else if (ring->verify(input, -1)) {
    __builtin_trap();
  }
  return 0;
}
