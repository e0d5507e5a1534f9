// The collector's credentials and who may do what: the credentials file
// (made at first start, 0600, only token digests; a group- or
// world-readable file refused), bearer tokens by role, device identity
// (token or certificate), enrollment and its rate limits, key rotation that
// keeps earlier device tokens valid, and the enrollment request parser.
#include "auth/authenticator.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "auth/enrollment_request.h"

namespace {

using namespace blur::collector;
using namespace blur::collector::auth;

constexpr int64_t kNow = 1795000000;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-auth-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    auth_dir_ = dir_ + "/auth";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::unique_ptr<Authenticator> open(EnrollmentLimits limits = {}) {
    FirstStart first;
    auto opened = Authenticator::open(auth_dir_, limits, &first);
    EXPECT_TRUE(opened) << opened.error().message;
    first_start_files_ = first.token_files;
    return opened ? std::move(opened).value() : nullptr;
  }
  std::string bearer(const std::string& file) { return "Bearer " + read(auth_dir_ + "/" + file); }
  std::string dir_, auth_dir_;
  std::vector<std::string> first_start_files_;
};

TEST_F(AuthenticatorTest, FirstStartMakesPrivateCredentialsWithDigestsOnly) {
  auto auth = open();
  ASSERT_TRUE(auth);
  ASSERT_EQ(first_start_files_.size(), 3u);
  struct stat info {};
  ASSERT_EQ(stat(auth_dir_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  for (const char* file : {"credentials.toml", "admin-token", "reader-token", "enrollment-secret"}) {
    ASSERT_EQ(stat((auth_dir_ + "/" + file).c_str(), &info), 0) << file;
    EXPECT_EQ(info.st_mode & 0777, 0600u) << file;
  }
  const std::string credentials = read(credentials_path(auth_dir_));
  for (const char* file : {"admin-token", "reader-token", "enrollment-secret"}) {
    const std::string token = read(auth_dir_ + "/" + file);
    // blur-<role>-<64 hex>: 256 random bits.
    const size_t dash = token.rfind('-');
    EXPECT_EQ(token.rfind("blur-", 0), 0u) << token;
    EXPECT_EQ(token.size() - dash - 1, 64u) << token;
    EXPECT_EQ(token.find_first_not_of("0123456789abcdef", dash + 1), std::string::npos) << token;
    EXPECT_EQ(credentials.find(token), std::string::npos) << "a token in plain text";
    EXPECT_NE(credentials.find(to_hex(sha256(token))), std::string::npos) << file;
  }
  // The second start loads the same credentials and writes nothing new.
  const std::string reader = bearer("reader-token");
  auth.reset();
  auto again = open();
  EXPECT_TRUE(first_start_files_.empty());
  EXPECT_TRUE(again->allow(reader, Role::kReader));
}

TEST_F(AuthenticatorTest, CredentialsOthersCanReadAreRefused) {
  ASSERT_TRUE(open());
  ASSERT_EQ(chmod(credentials_path(auth_dir_).c_str(), 0640), 0);
  FirstStart first;
  auto refused = Authenticator::open(auth_dir_, {}, &first);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("mode 0640"), std::string::npos)
      << refused.error().message;
}

TEST_F(AuthenticatorTest, RolesDecideWhatATokenMayDo) {
  auto auth = open();
  const std::string admin = bearer("admin-token"), reader = bearer("reader-token"),
                    enrollment = bearer("enrollment-secret");
  EXPECT_TRUE(auth->allow(reader, Role::kReader));
  EXPECT_TRUE(auth->allow(admin, Role::kReader));  // an admin may read
  EXPECT_TRUE(auth->allow(admin, Role::kAdmin));
  EXPECT_TRUE(auth->allow(enrollment, Role::kEnrollment));
  auto kind = [&](const std::string& authorization, Role role) {
    auto allowed = auth->allow(authorization, role);
    return allowed ? std::string("ok")
                   : allowed.error().kind == Error::Kind::kForbidden ? "403" : "401";
  };
  EXPECT_EQ(kind(reader, Role::kAdmin), "403");
  EXPECT_EQ(kind(enrollment, Role::kReader), "403");
  EXPECT_EQ(kind(admin, Role::kEnrollment), "403");
  EXPECT_EQ(kind("", Role::kReader), "401");
  EXPECT_EQ(kind("Basic abc", Role::kReader), "401");
  EXPECT_EQ(kind("Bearer blur-reader-" + std::string(64, '0'), Role::kReader), "401");
  // One character changed: unknown.
  std::string altered = reader;
  altered.back() = altered.back() == '0' ? '1' : '0';
  EXPECT_EQ(kind(altered, Role::kReader), "401");
  // The scheme is case-insensitive (RFC 7235); the token is not.
  EXPECT_EQ(kind("bearer " + reader.substr(7), Role::kReader), "ok");
  // A device token reads nothing.
  auto enrolled = auth->enroll(enrollment, "10.0.0.1", 42, kNow);
  ASSERT_TRUE(enrolled);
  EXPECT_EQ(kind("Bearer " + enrolled->token, Role::kReader), "403");
  // Messages never echo the credential.
  auto refused = auth->allow(altered, Role::kReader);
  EXPECT_EQ(refused.error().message.find(altered.substr(7)), std::string::npos);
}

TEST_F(AuthenticatorTest, ADeviceIsItsTokensNonceOrItsCertificates) {
  auto auth = open();
  auto enrolled = auth->enroll(bearer("enrollment-secret"), "10.0.0.1", 0xabcdef, kNow);
  ASSERT_TRUE(enrolled);
  EXPECT_EQ(enrolled->expires_at, kNow + 30 * 86400);
  auto device = auth->device("Bearer " + enrolled->token, std::nullopt, kNow + 1);
  ASSERT_TRUE(device);
  EXPECT_EQ(device.value(), 0xabcdefu);
  // A certificate's nonce stands without a token.
  EXPECT_EQ(auth->device("", 77, kNow).value(), 77u);
  auto kind = [&](const std::string& authorization, int64_t now) {
    auto d = auth->device(authorization, std::nullopt, now);
    return d ? std::string("ok") : d.error().kind == Error::Kind::kForbidden ? "403" : "401";
  };
  EXPECT_EQ(kind("", kNow), "401");
  EXPECT_EQ(kind("Bearer " + enrolled->token, enrolled->expires_at), "401");  // expired
  EXPECT_EQ(kind(bearer("reader-token"), kNow), "403");  // a reader is no device
  EXPECT_EQ(kind("Bearer bt1-garbage", kNow), "401");
}

TEST_F(AuthenticatorTest, RotationSignsWithTheNewKeyAndKeepsOldTokensValid) {
  auto auth = open();
  const std::string secret = bearer("enrollment-secret");
  auto before = auth->enroll(secret, "a", 1, kNow);
  auto id = auth->rotate_device_key();
  ASSERT_TRUE(id);
  EXPECT_EQ(id.value(), 2u);
  auto after = auth->enroll(secret, "a", 2, kNow);
  EXPECT_EQ(after->token.substr(0, 12), "bt1-00000002");
  EXPECT_TRUE(auth->device("Bearer " + before->token, std::nullopt, kNow));
  EXPECT_TRUE(auth->device("Bearer " + after->token, std::nullopt, kNow));
  // Saved before it took effect: a restart knows both keys.
  auth.reset();
  auto restarted = open();
  EXPECT_TRUE(restarted->device("Bearer " + before->token, std::nullopt, kNow));
  EXPECT_TRUE(restarted->device("Bearer " + after->token, std::nullopt, kNow));
}

TEST_F(AuthenticatorTest, CreatedTokensWorkAtOnceAndAfterARestart) {
  auto auth = open();
  auto token = auth->create_token(Role::kReader, "grafana \"prod\"\n");
  ASSERT_TRUE(token);
  EXPECT_EQ(token->rfind("blur-reader-", 0), 0u);
  EXPECT_TRUE(auth->allow("Bearer " + token.value(), Role::kReader));
  EXPECT_EQ(read(credentials_path(auth_dir_)).find(token.value()), std::string::npos);
  auth.reset();
  EXPECT_TRUE(open()->allow("Bearer " + token.value(), Role::kReader));
}

TEST_F(AuthenticatorTest, EnrollmentIsRateLimitedPerAddressAndPerSecret) {
  auto auth = open({/*per_address_per_hour=*/3, /*per_secret_per_hour=*/5});
  const std::string secret = bearer("enrollment-secret");
  int enrolled = 0;
  for (int i = 0; i < 5; ++i) enrolled += auth->enroll(secret, "10.0.0.1", i, kNow).ok();
  EXPECT_EQ(enrolled, 3);  // the address's 3 per hour
  auto refused = auth->enroll(secret, "10.0.0.1", 9, kNow);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Error::Kind::kTooManyRequests);
  EXPECT_GT(refused.error().retry_after_seconds, 0u);
  // Other addresses, same secret: 2 more fit the secret's 5 per hour.
  EXPECT_TRUE(auth->enroll(secret, "10.0.0.2", 10, kNow));
  EXPECT_TRUE(auth->enroll(secret, "10.0.0.3", 11, kNow));
  auto secret_spent = auth->enroll(secret, "10.0.0.4", 12, kNow);
  ASSERT_FALSE(secret_spent);
  EXPECT_NE(secret_spent.error().message.find("enrollment secret"), std::string::npos);
  // Without the secret nothing is counted or issued.
  EXPECT_EQ(auth->enroll(bearer("reader-token"), "10.0.0.5", 13, kNow).error().kind,
            Error::Kind::kForbidden);
}

TEST(RateLimiter, RefillsAtTheHourlyRate) {
  RateLimiter limiter(3600);  // one per second, bursts of 3600
  const auto t0 = RateLimiter::Clock::now();
  uint32_t retry = 0;
  for (int i = 0; i < 3600; ++i) ASSERT_TRUE(limiter.allow("k", t0, &retry));
  EXPECT_FALSE(limiter.allow("k", t0, &retry));
  EXPECT_EQ(retry, 1u);
  EXPECT_TRUE(limiter.allow("k", t0 + std::chrono::seconds(1), &retry));
  EXPECT_FALSE(limiter.allow("k", t0 + std::chrono::seconds(1), &retry));
  EXPECT_TRUE(limiter.allow("other", t0, &retry));
}

TEST(RateLimiter, BoundedMemoryForgetsFullBucketsThenFailsClosed) {
  RateLimiter limiter(10, /*max_keys=*/2);
  const auto t0 = RateLimiter::Clock::now();
  EXPECT_TRUE(limiter.allow("a", t0, nullptr));
  EXPECT_TRUE(limiter.allow("b", t0, nullptr));
  EXPECT_FALSE(limiter.allow("c", t0, nullptr));  // both buckets partly used
  // An hour later both are full again and forgotten.
  EXPECT_TRUE(limiter.allow("c", t0 + std::chrono::hours(1), nullptr));
  EXPECT_EQ(limiter.keys(), 1u);
}

TEST(EnrollmentRequest, OnlyTheExactShapeParses) {
  EXPECT_EQ(parse_enrollment_request(R"({"device_nonce": "0123456789abcdef"})").value(),
            0x0123456789abcdefu);
  EXPECT_EQ(parse_enrollment_request(R"({"device_nonce":"ffffffffffffffff"})").value(),
            UINT64_MAX);
  for (const char* bad :
       {"", "{}", "[]", "null", R"({"device_nonce": 12})", R"({"device_nonce": "0123"})",
        R"({"device_nonce": "0123456789ABCDEF"})", R"({"device_nonce": "0123456789abcdeg"})",
        R"({"device_nonce": "0123456789abcdef", "x": 1})", R"({"device_nonce": "0123456789abcdef")",
        "{\"device_nonce\": \"0123456789abcde\\u0066\"} trailing"}) {
    auto parsed = parse_enrollment_request(bad);
    EXPECT_FALSE(parsed) << bad;
    if (!parsed) {
      EXPECT_EQ(parsed.error().kind, Error::Kind::kInvalid);
    }
  }
  EXPECT_FALSE(parse_enrollment_request(std::string(300, ' ') + R"({"device_nonce": "00"})"));
}

TEST(Credentials, TextRoundTripsAndBadFilesNameTheProblem) {
  Credentials c;
  c.device_token_keys.push_back({3, {}});
  c.device_token_keys[0].secret.fill(0xab);
  c.tokens.push_back({"reader \"x\"\\\n", Role::kReader, sha256("t")});
  c.device_token_lifetime_days = 7;
  auto parsed = parse_credentials(credentials_text(c), "mem");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(credentials_text(parsed.value()), credentials_text(c));
  EXPECT_EQ(parsed->tokens[0].name, c.tokens[0].name);
  for (const char* bad : {"", "[[device_token_key]]\nid = 0\nsecret = \"00\"",
                          "x = 1\n[[device_token_key]]\nid = 1\nsecret = \"" 
                          "0000000000000000000000000000000000000000000000000000000000000000\"",
                          "[[device_token_key]\n"}) {
    EXPECT_FALSE(parse_credentials(bad, "mem")) << bad;
  }
}

}  // namespace
