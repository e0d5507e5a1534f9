// The enrollment body (blur/enrollment.h): the device key's derivation
// against an independent computation, the body's exact shape with and
// without a device token, its refusals, and a Client's body: stable across
// reboots, different for another device.
#include "blur/enrollment.h"

#include <gtest/gtest.h>
#include <string.h>

#include "blur/compat/std_facilities.h"

#include "blur/client.h"
#include "sim_port.h"

namespace {

using blur::Status;

// Python's hmac module, independently:
//   hmac.new(bytes(range(32)), b"blur.enroll.v1" + (0x0123456789abcdef).to_bytes(8, "little"),
//            hashlib.sha256).hexdigest()
constexpr char kKnownKey[] = "8724439aa6e38eac122c2c954803441473b0971742beb055f3f3bd62a6869537";
constexpr uint64_t kNonce = 0x0123456789abcdefu;

void secret_0_to_31(uint8_t secret[32]) {
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(i);
}

TEST(Enrollment, DeviceKeyIsHmacOfTheLabelAndTheNonce) {
  uint8_t secret[32];
  secret_0_to_31(secret);
  uint8_t key[blur::kDeviceKeySize];
  ASSERT_EQ(blur::derive_device_key(secret, kNonce, key), Status::kOk);
  char hex[2 * blur::kDeviceKeySize + 1];
  for (size_t i = 0; i < blur::kDeviceKeySize; ++i) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex[2 * i] = kHex[key[i] >> 4];
    hex[2 * i + 1] = kHex[key[i] & 15];
  }
  hex[2 * blur::kDeviceKeySize] = '\0';
  EXPECT_EQ(strcmp(hex, kKnownKey), 0) << hex;
  EXPECT_EQ(blur::derive_device_key(nullptr, kNonce, key), Status::kInvalidArgument);
}

TEST(Enrollment, BodyHasTheExactShapeWithAndWithoutAToken) {
  uint8_t secret[32];
  secret_0_to_31(secret);
  char body[blur::kEnrollmentBodyWithTokenSize];
  ASSERT_EQ(blur::write_enrollment_body(kNonce, secret, nullptr, body, blur::kEnrollmentBodySize),
            Status::kOk);
  char expected[blur::kEnrollmentBodyWithTokenSize];
  strcpy(expected, "{\"device_nonce\":\"0123456789abcdef\",\"device_key\":\"");
  strcat(expected, kKnownKey);
  strcat(expected, "\"}");
  EXPECT_EQ(strcmp(body, expected), 0) << body;
  EXPECT_EQ(strlen(body) + 1, blur::kEnrollmentBodySize);
  EXPECT_EQ(blur::write_enrollment_body(kNonce, secret, nullptr, body,
                                        blur::kEnrollmentBodySize - 1),
            Status::kBufferTooSmall);

  const char* token = "bt1-00000001-0123456789abcdef-0000000069000000-00112233445566778899aabbccddeeff";
  ASSERT_EQ(blur::write_enrollment_body(kNonce, secret, token, body, sizeof body), Status::kOk);
  expected[strlen(expected) - 1] = '\0';  // without the closing brace
  strcat(expected, ",\"device_token\":\"");
  strcat(expected, token);
  strcat(expected, "\"}");
  EXPECT_EQ(strcmp(body, expected), 0) << body;
  // Exactly as large as it needs: the fixed part, 18 bytes and the token.
  EXPECT_EQ(blur::write_enrollment_body(kNonce, secret, token, body,
                                        blur::kEnrollmentBodySize + 18 + strlen(token) - 1),
            Status::kBufferTooSmall);
  EXPECT_EQ(blur::write_enrollment_body(kNonce, secret, token, body,
                                        blur::kEnrollmentBodySize + 18 + strlen(token)),
            Status::kOk);

  // A token that would break the JSON, an empty one, a too long one.
  for (const char* bad : {"bt1-\"", "a\\b", "a b", ""}) {
    EXPECT_EQ(blur::write_enrollment_body(kNonce, secret, bad, body, sizeof body),
              Status::kInvalidArgument)
        << bad;
  }
  char longest[blur::kMaxDeviceTokenLength + 2];
  memset(longest, 'a', blur::kMaxDeviceTokenLength);
  longest[blur::kMaxDeviceTokenLength] = '\0';
  EXPECT_EQ(blur::write_enrollment_body(kNonce, secret, longest, body, sizeof body), Status::kOk);
  EXPECT_EQ(strlen(body) + 1, blur::kEnrollmentBodyWithTokenSize);
  longest[blur::kMaxDeviceTokenLength] = 'a';
  longest[blur::kMaxDeviceTokenLength + 1] = '\0';
  EXPECT_EQ(blur::write_enrollment_body(kNonce, secret, longest, body, sizeof body),
            Status::kInvalidArgument);
}

blur::LedgerPolicy policy() {
  blur::LedgerPolicy p;
  p.lifetime_cap_micros = 10 * uint64_t{blur::kEpsilonMicrosPerNat};
  return p;
}

// The key comes from the ledger's secret: the same after a reboot, another
// for another device; the Client refuses a ledger without a secret.
TEST(Enrollment, ClientBodyIsStableAcrossRebootsAndPerDevice) {
  static blur::Client client;
  char first[blur::kEnrollmentBodySize], again[blur::kEnrollmentBodySize],
      other[blur::kEnrollmentBodySize];
  static blur::sim::SimPort port(81);
  new (&client) blur::Client();
  EXPECT_EQ(client.enrollment_body(first, sizeof first), Status::kLedgerClosed);
  ASSERT_EQ(client.open(port.port()), Status::kNotProvisioned);
  ASSERT_EQ(client.provision(policy()), Status::kOk);
  ASSERT_EQ(client.enrollment_body(first, sizeof first), Status::kOk);
  char expected[blur::kEnrollmentBodySize];
  ASSERT_EQ(blur::write_enrollment_body(client.ledger().device_nonce(), client.ledger().secret(),
                                        nullptr, expected, sizeof expected),
            Status::kOk);
  EXPECT_EQ(strcmp(first, expected), 0) << first;

  new (&client) blur::Client();  // a reboot on the same storage
  ASSERT_EQ(client.open(port.port()), Status::kOk);
  ASSERT_EQ(client.enrollment_body(again, sizeof again), Status::kOk);
  EXPECT_EQ(strcmp(first, again), 0) << first;

  static blur::sim::SimPort other_port(82);
  new (&client) blur::Client();
  ASSERT_EQ(client.open(other_port.port()), Status::kNotProvisioned);
  ASSERT_EQ(client.provision(policy()), Status::kOk);
  ASSERT_EQ(client.enrollment_body(other, sizeof other), Status::kOk);
  EXPECT_NE(strcmp(first, other), 0) << first;
  EXPECT_NE(strncmp(first + 49, other + 49, 64), 0) << "the keys differ";

  // A ledger provisioned without a device secret has no key to derive.
  static blur::sim::SimPort bare_port(83);
  new (&client) blur::Client();
  ASSERT_EQ(client.open(bare_port.port()), Status::kNotProvisioned);
  static blur::Ledger ledger;
  ASSERT_EQ(ledger.provision(bare_port.port(), blur::sim::SimPort::kLedgerPartition, policy(),
                             0x77),
            Status::kOk);
  new (&client) blur::Client();
  ASSERT_EQ(client.open(bare_port.port()), Status::kOk);
  EXPECT_EQ(client.enrollment_body(other, sizeof other), Status::kInvalidArgument);
}

}  // namespace
