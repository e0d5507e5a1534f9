// Device tokens: issued tokens verify and say their nonce; every way of
// forging, altering, expiring or mis-spelling one is refused; rotation keeps
// old tokens valid while their key is held.
#include "auth/device_token.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using namespace blur::collector;
using namespace blur::collector::auth;

DeviceTokenKey key(uint32_t id, uint8_t fill) {
  DeviceTokenKey k;
  k.id = id;
  k.secret.fill(fill);
  return k;
}

constexpr int64_t kNow = 1795000000;

TEST(DeviceToken, IssuedTokenVerifiesAndCarriesItsClaims) {
  auto ring = KeyRing::create({key(1, 7)});
  ASSERT_TRUE(ring);
  const std::string token = ring->issue(0x0123456789abcdefu, kNow + 3600);
  EXPECT_EQ(token.size(), kDeviceTokenLength);
  EXPECT_EQ(token.substr(0, 30), "bt1-00000001-0123456789abcdef-");
  auto claims = ring->verify(token, kNow);
  ASSERT_TRUE(claims) << claims.error().message;
  EXPECT_EQ(claims->device_nonce, 0x0123456789abcdefu);
  EXPECT_EQ(claims->expires_at, kNow + 3600);
  EXPECT_EQ(claims->key_id, 1u);
}

TEST(DeviceToken, ExpiredTokenIsRefused) {
  auto ring = KeyRing::create({key(1, 7)});
  const std::string token = ring->issue(5, kNow);
  auto refused = ring->verify(token, kNow);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Error::Kind::kUnauthenticated);
  EXPECT_NE(refused.error().message.find("expired"), std::string::npos);
}

// Changing any one character (another nonce, a later expiry, another MAC
// digit) breaks the signature or the form: a device cannot claim another's
// nonce or extend its token.
TEST(DeviceToken, EveryAlteredCharacterIsRefused) {
  auto ring = KeyRing::create({key(1, 7)});
  const std::string token = ring->issue(42, kNow + 60);
  for (size_t i = 0; i < token.size(); ++i) {
    for (const char replacement : {'0', '7', 'f', 'A', '-', 'z'}) {
      if (token[i] == replacement) continue;
      std::string altered = token;
      altered[i] = replacement;
      auto refused = ring->verify(altered, kNow);
      ASSERT_FALSE(refused) << altered;
      EXPECT_EQ(refused.error().kind, Error::Kind::kUnauthenticated);
      EXPECT_EQ(refused.error().message.find(altered), std::string::npos) << "the token is echoed";
    }
  }
  EXPECT_FALSE(ring->verify(token + "0", kNow));
  EXPECT_FALSE(ring->verify(token.substr(1), kNow));
  EXPECT_FALSE(ring->verify("", kNow));
}

TEST(DeviceToken, AnotherCollectorsKeyIsRefused) {
  auto ours = KeyRing::create({key(1, 7)});
  auto theirs = KeyRing::create({key(1, 8)});
  auto refused = ours->verify(theirs->issue(42, kNow + 60), kNow);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("signature"), std::string::npos);
}

// Rotation: a ring with keys 1 and 2 issues with 2 and still accepts
// tokens of 1; once key 1 is dropped, its tokens are refused and say so.
TEST(DeviceToken, RotationKeepsOldTokensUntilTheirKeyIsDropped) {
  auto before = KeyRing::create({key(1, 7)});
  const std::string old_token = before->issue(42, kNow + 60);
  auto rotated = KeyRing::create({key(2, 9), key(1, 7)});
  ASSERT_TRUE(rotated);
  EXPECT_TRUE(rotated->verify(old_token, kNow));
  const std::string new_token = rotated->issue(42, kNow + 60);
  EXPECT_EQ(rotated->verify(new_token, kNow)->key_id, 2u);
  auto after = KeyRing::create({key(2, 9)});
  EXPECT_TRUE(after->verify(new_token, kNow));
  auto refused = after->verify(old_token, kNow);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("retired"), std::string::npos);
}

TEST(DeviceToken, RingRefusesNoKeysAndDuplicateIds) {
  EXPECT_FALSE(KeyRing::create({}));
  EXPECT_FALSE(KeyRing::create({key(3, 1), key(3, 2)}));
}

// Random strings of the token's length and alphabet never verify
// (2^-128 per try for a MAC guess).
TEST(DeviceToken, RandomTokensNeverVerify) {
  auto ring = KeyRing::create({key(1, 7)});
  std::mt19937_64 rng(13);
  const std::string shape = ring->issue(1, kNow + 60);
  for (int i = 0; i < 20000; ++i) {
    std::string guess = shape;
    for (size_t c = 47; c < guess.size(); ++c) guess[c] = "0123456789abcdef"[rng() % 16];
    if (guess == shape) continue;
    EXPECT_FALSE(ring->verify(guess, kNow));
  }
}

}  // namespace
