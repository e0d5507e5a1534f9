// The collector's credentials and who may do what: the credentials file
// (made at first start, 0600, only token digests; a group- or
// world-readable file refused), bearer tokens by role, device identity
// (token or certificate), enrollment (a nonce bound to its device key in a
// real SQLite store: a takeover refused, renewals, devices from before
// keys) and its limits (per source, per secret with its reserve, per
// device for renewals), key rotation that keeps earlier device tokens
// valid, the enrollment request parser, and revocation: tokens by id or
// name (never the last admin), devices by nonce (token, certificate and
// enrollment refused until restored), changes that collectors sharing the
// directory take in while running, a bad new file that leaves the last
// good credentials in force, and the directory's mode.
#include "auth/authenticator.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "api/store_device_registry.h"
#include "auth/enrollment_request.h"
#include "incoming_reports.h"
#include "ingest/enrollment_times.h"
#include "store/store.h"

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
  void TearDown() override {
    devices_.reset();
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  // The store every enrollment of the test records its bindings in.
  Store& store() {
    if (!store_) {
      auto opened = Store::open("sqlite:" + dir_ + "/blur.db", Store::Mode::kReadWrite);
      EXPECT_TRUE(opened) << opened.error().message;
      store_ = std::move(opened).value();
      devices_ = std::make_unique<StoreDeviceRegistry>(*store_);
    }
    return *store_;
  }
  // A device's enrollment: `key_of` stands for the device's secret (the
  // SDK derives the key from it; here any 32 bytes per device will do).
  Outcome<Enrollment> enroll(Authenticator& auth, const std::string& authorization,
                             const std::string& address, uint64_t nonce, int64_t now = kNow,
                             uint64_t key_of = 0, const std::string& device_token = "") {
    store();
    EnrollmentRequest request;
    request.device_nonce = nonce;
    request.device_key = sha256("device secret " + std::to_string(key_of != 0 ? key_of : nonce));
    request.device_token = device_token;
    return auth.enroll(authorization, address, request, *devices_, now);
  }
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
  std::unique_ptr<Store> store_;
  std::unique_ptr<StoreDeviceRegistry> devices_;
};

Error::Kind kind_of(const Outcome<Enrollment>& e) { return e ? Error::Kind{} : e.error().kind; }

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
  auto enrolled = enroll(*auth, enrollment, "10.0.0.1", 42);
  ASSERT_TRUE(enrolled);
  EXPECT_EQ(kind("Bearer " + enrolled->token, Role::kReader), "403");
  // Messages never echo the credential.
  auto refused = auth->allow(altered, Role::kReader);
  EXPECT_EQ(refused.error().message.find(altered.substr(7)), std::string::npos);
}

TEST_F(AuthenticatorTest, ADeviceIsItsTokensNonceOrItsCertificates) {
  auto auth = open();
  auto enrolled = enroll(*auth, bearer("enrollment-secret"), "10.0.0.1", 0xabcdef);
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
  auto before = enroll(*auth, secret, "a", 1);
  auto id = auth->rotate_device_key();
  ASSERT_TRUE(id);
  EXPECT_EQ(id.value(), 2u);
  auto after = enroll(*auth, secret, "a", 2);
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
  for (int i = 1; i <= 5; ++i) enrolled += enroll(*auth, secret, "10.0.0.1", i).ok();
  EXPECT_EQ(enrolled, 3);  // the address's 3 per hour
  auto refused = enroll(*auth, secret, "10.0.0.1", 9);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Error::Kind::kTooManyRequests);
  EXPECT_GT(refused.error().retry_after_seconds, 0u);
  // Other addresses, same secret: 2 more fit the secret's 5 per hour.
  EXPECT_TRUE(enroll(*auth, secret, "10.0.0.2", 10));
  EXPECT_TRUE(enroll(*auth, secret, "10.0.0.3", 11));
  auto secret_spent = enroll(*auth, secret, "10.0.0.4", 12);
  ASSERT_FALSE(secret_spent);
  EXPECT_NE(secret_spent.error().message.find("enrollment secret"), std::string::npos);
  // Without the secret nothing is counted or issued.
  EXPECT_EQ(kind_of(enroll(*auth, bearer("reader-token"), "10.0.0.5", 13)),
            Error::Kind::kForbidden);
  EXPECT_FALSE(store().device(13).value());
}

// Attack 4 of issue 26: whoever holds the enrollment secret enrolls a
// victim's nonce (it is in clear in the victim's token). Now the nonce is
// the victim's key's: the thief gets 409, the binding stays, the victim
// still renews, even with its token long expired.
TEST_F(AuthenticatorTest, AnotherKeyCannotTakeAnEnrolledNonce) {
  auto auth = open();
  const std::string secret = bearer("enrollment-secret");
  constexpr uint64_t kVictim = 0x5eed;
  ASSERT_TRUE(enroll(*auth, secret, "10.0.0.1", kVictim));
  const auto bound = store().device(kVictim).value();
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->enrolled_at, kNow);
  EXPECT_EQ(bound->key_sha256, sha256(std::string_view(
                                   reinterpret_cast<const char*>(
                                       sha256("device secret " + std::to_string(kVictim)).data()),
                                   32)));

  for (const char* thief : {"10.0.0.1", "10.0.0.66"}) {
    auto stolen = enroll(*auth, secret, thief, kVictim, kNow + 10, /*key_of=*/666);
    ASSERT_FALSE(stolen) << thief;
    EXPECT_EQ(stolen.error().kind, Error::Kind::kConflict);
    EXPECT_NE(stolen.error().message.find("another device key"), std::string::npos);
  }
  const auto after = store().device(kVictim).value();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->key_sha256, bound->key_sha256);
  EXPECT_EQ(after->enrolled_at, kNow);

  // The victim renews with its key, 40 days later (its 30-day token expired).
  const int64_t later = kNow + 40 * 86400;
  auto renewed = enroll(*auth, secret, "10.0.0.1", kVictim, later);
  ASSERT_TRUE(renewed) << renewed.error().message;
  EXPECT_EQ(auth->device("Bearer " + renewed->token, std::nullopt, later).value(), kVictim);
  EXPECT_EQ(store().device(kVictim).value()->last_renewed_at, later);
  EXPECT_EQ(store().enrolled_at(kVictim).value(), std::optional<int64_t>(kNow));
  EXPECT_EQ(store().devices_enrolled_since(kNow).value(), 1u);
  EXPECT_EQ(store().devices_enrolled_since(kNow + 1).value(), 0u);

  // A second collector on the same database (its own credentials, its own
  // limits) refuses the thief too: the binding is in the store.
  const std::string other_dir = dir_ + "/auth2";
  FirstStart first;
  auto other = Authenticator::open(other_dir, {}, &first);
  ASSERT_TRUE(other);
  const std::string other_secret = "Bearer " + read(other_dir + "/enrollment-secret");
  EXPECT_EQ(kind_of(enroll(*other.value(), other_secret, "10.0.0.9", kVictim, later, 666)),
            Error::Kind::kConflict);
  EXPECT_TRUE(enroll(*other.value(), other_secret, "10.0.0.9", kVictim, later));
}

// Enrollment hands the times it binds or reads to the ingest's cache of
// enrollment times (api/store_device_registry.h): a device's first batch
// needs no read of its own. The cache here reads an empty store, so a time
// it answers came from enrollment.
TEST_F(AuthenticatorTest, EnrollmentRemembersEnrollmentTimesForIngest) {
  auto auth = open();
  const std::string secret = bearer("enrollment-secret");
  auto empty = Store::open("sqlite:" + dir_ + "/empty.db", Store::Mode::kReadWrite);
  ASSERT_TRUE(empty) << empty.error().message;
  EnrollmentTimes times(*empty.value());
  StoreDeviceRegistry remembering(store(), &times);
  auto enroll_with = [&](StoreDeviceRegistry& registry, uint64_t nonce, int64_t now) {
    EnrollmentRequest request;
    request.device_nonce = nonce;
    request.device_key = sha256("device secret " + std::to_string(nonce));
    return auth->enroll(secret, "10.0.0.1", request, registry, now);
  };
  ASSERT_TRUE(enroll_with(remembering, 0xa1, kNow));  // bound now
  EXPECT_EQ(times.of(0xa1).value(), std::optional<int64_t>(kNow));
  ASSERT_TRUE(enroll_with(*devices_, 0xa2, kNow + 5));  // bound without the cache
  EXPECT_EQ(times.of(0xa2).value(), std::nullopt);
  // A renewal reads the binding: its first enrollment's time, not now.
  ASSERT_TRUE(enroll_with(remembering, 0xa2, kNow + 40 * 86400));
  EXPECT_EQ(times.of(0xa2).value(), std::optional<int64_t>(kNow + 5));
}

// Renewals never take the new-device allowances: with both spent, known
// devices still renew; their own limit is per device.
TEST_F(AuthenticatorTest, RenewalsDoNotSpendTheNewDeviceAllowance) {
  EnrollmentLimits limits;
  limits.per_address_per_hour = 2;
  limits.per_secret_per_hour = 2;
  limits.renewals_per_device_per_hour = 4;
  auto auth = open(limits);
  const std::string secret = bearer("enrollment-secret");
  ASSERT_TRUE(enroll(*auth, secret, "10.0.0.1", 1));
  ASSERT_TRUE(enroll(*auth, secret, "10.0.0.1", 2));
  EXPECT_EQ(kind_of(enroll(*auth, secret, "10.0.0.1", 3)), Error::Kind::kTooManyRequests);
  EXPECT_EQ(kind_of(enroll(*auth, secret, "10.0.0.2", 3)), Error::Kind::kTooManyRequests);
  // Both devices renew, from anywhere, 4 times each in the hour...
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(enroll(*auth, secret, "10.0.0.1", 1, kNow + i)) << i;
    EXPECT_TRUE(enroll(*auth, secret, "10.0.0.7", 2, kNow + i)) << i;
  }
  // ...then the device's own limit answers, with a Retry-After.
  auto loop = enroll(*auth, secret, "10.0.0.1", 1, kNow + 5);
  ASSERT_FALSE(loop);
  EXPECT_EQ(loop.error().kind, Error::Kind::kTooManyRequests);
  EXPECT_NE(loop.error().message.find("this device"), std::string::npos);
  EXPECT_GT(loop.error().retry_after_seconds, 0u);
  // A renewal records its time at most hourly (no write per renewal).
  EXPECT_EQ(store().device(1).value()->last_renewed_at, kNow);
}

// Attack 5 of issue 26: three addresses drain the secret's allowance. They
// share its upper half; the lower half admits 10 an hour per source, so a
// fourth address still enrolls. (Before: one shared bucket, 3 x 1,000 took
// all 3,000 and the fourth address got 429.)
TEST_F(AuthenticatorTest, AFewSourcesCannotSpendTheSecretsAllowanceForAll) {
  EnrollmentLimits limits;
  limits.per_address_per_hour = 1000;
  limits.per_secret_per_hour = 3000;
  auto auth = open(limits);
  const std::string secret = bearer("enrollment-secret");
  uint64_t nonce = 1;
  int taken[3] = {};
  for (int round = 0; round < 1200; ++round) {
    for (int a = 0; a < 3; ++a) {
      taken[a] += enroll(*auth, secret, "10.0.0." + std::to_string(a + 2), nonce++).ok();
    }
  }
  const int total = taken[0] + taken[1] + taken[2];
  std::printf("3 sources, 3,600 attempts: %d, %d, %d enrolled (%d of the secret's 3,000)\n",
              taken[0], taken[1], taken[2], total);
  // The upper half and 10 each from the reserve; more only by the secret's
  // refill while the test runs (0.83 an hour's second: 70 would take 84 s).
  EXPECT_GE(total, 1500 + 3 * static_cast<int>(kReservePerSource));
  EXPECT_LE(total, 1600);
  auto fresh = enroll(*auth, secret, "10.0.0.5", nonce++);
  EXPECT_TRUE(fresh) << fresh.error().message;
  // The attackers' reserve shares are spent: told why, with a Retry-After.
  auto more = enroll(*auth, secret, "10.0.0.2", nonce++);
  ASSERT_FALSE(more);
  EXPECT_NE(more.error().message.find("nearly spent"), std::string::npos) << more.error().message;
  EXPECT_GT(more.error().retry_after_seconds, 0u);
  // An IPv6 attacker counts per /64, not per address.
  int v6 = 0;
  for (int i = 1; i <= 20; ++i) {
    v6 += enroll(*auth, secret, "2001:db8:0:7::" + std::to_string(i), nonce++).ok();
  }
  EXPECT_EQ(v6, static_cast<int>(kReservePerSource));
}

TEST(EnrollmentSource, IPv6CountsPerSlash64AndMappedIPv4AsIPv4) {
  EXPECT_EQ(enrollment_source("127.0.0.2"), "127.0.0.2");
  EXPECT_EQ(enrollment_source("2001:db8:0:7::1"), "2001:db8:0:7::/64");
  EXPECT_EQ(enrollment_source("2001:db8:0:7:ffff:1:2:3"), "2001:db8:0:7::/64");
  EXPECT_EQ(enrollment_source("::ffff:10.1.2.3"), "10.1.2.3");
  EXPECT_EQ(enrollment_source("::1"), "::/64");
  EXPECT_EQ(enrollment_source("unknown"), "unknown");
}

// A nonce with reports but no key (enrolled before device keys, or a
// certificate device): bound only with a token the collector signed for
// it, expired or not.
TEST_F(AuthenticatorTest, ANonceWithReportsButNoKeyNeedsItsToken) {
  auto auth = open();
  const std::string secret = bearer("enrollment-secret");
  constexpr uint64_t kOld = 0x01d;
  ASSERT_TRUE(store().register_metric({1, blur::MechanismId::kBinaryRandomizedResponse, 1000000, 2}));
  Batch batch;
  batch.sdk_version = 256;
  batch.device_nonce = kOld;
  batch.reports.push_back(blur_test::binary_report(0, true));
  ASSERT_TRUE(store().insert({{&batch, kNow}}));

  auto credentials = load_credentials(credentials_path(auth_dir_));
  ASSERT_TRUE(credentials);
  const DeviceTokenKey key = credentials->device_token_keys.back();
  const std::string expired = issue_device_token(key, kOld, kNow - 86400);
  DeviceTokenKey unknown = key;
  unknown.secret[0] ^= 1;

  for (const std::string& proof :
       {std::string(), issue_device_token(key, kOld + 1, kNow + 86400),
        issue_device_token(unknown, kOld, kNow + 86400), std::string("bt1-garbage")}) {
    auto refused = enroll(*auth, secret, "10.0.0.1", kOld, kNow, 0, proof);
    ASSERT_FALSE(refused) << proof;
    EXPECT_EQ(refused.error().kind, Error::Kind::kConflict) << proof;
    EXPECT_NE(refused.error().message.find("device_token"), std::string::npos);
  }
  EXPECT_FALSE(store().device(kOld).value());
  auto proven = enroll(*auth, secret, "10.0.0.1", kOld, kNow, 0, expired);
  ASSERT_TRUE(proven) << proven.error().message;
  EXPECT_TRUE(store().device(kOld).value());
  // Bound now: the key alone renews, another key is refused.
  EXPECT_TRUE(enroll(*auth, secret, "10.0.0.1", kOld, kNow + 1));
  EXPECT_EQ(kind_of(enroll(*auth, secret, "10.0.0.1", kOld, kNow + 1, 666, expired)),
            Error::Kind::kConflict);
}

std::string kind_of(const Fallible& outcome) {
  if (outcome) return "ok";
  switch (outcome.error().kind) {
    case Error::Kind::kUnauthenticated:
      return "401";
    case Error::Kind::kForbidden:
      return "403";
    case Error::Kind::kNotFound:
      return "404";
    case Error::Kind::kConflict:
      return "409";
    default:
      return "other: " + outcome.error().message;
  }
}
template <typename T>
std::string kind_of(const Outcome<T>& outcome) {
  return outcome ? std::string("ok") : kind_of(Fallible(outcome.error()));
}
// The HTTP status text of an enrollment's outcome (kind_of above answers
// the error kind for the enrollment tests).
template <typename T>
std::string status_of(const Outcome<T>& outcome) {
  return kind_of<T>(outcome);
}

TEST_F(AuthenticatorTest, TokensAreRevokedByIdOrNameAndStayRevoked) {
  auto auth = open();
  auto grafana = auth->create_token(Role::kReader, "grafana");
  auto twin_a = auth->create_token(Role::kReader, "twin");
  auto twin_b = auth->create_token(Role::kReader, "twin");
  ASSERT_TRUE(grafana && twin_a && twin_b);
  // The id is the digest's first 16 hex digits, as in the file; never the token.
  const std::string id = token_id(sha256(grafana.value()));
  EXPECT_EQ(id.size(), 16u);
  EXPECT_EQ(grafana->find(id), std::string::npos);
  bool listed = false;
  for (const StoredToken& t : auth->tokens()) listed = listed || token_id(t.sha256) == id;
  EXPECT_TRUE(listed);

  auto revoked = auth->revoke_token({TokenChoice::By::kId, id}, kNow);
  ASSERT_TRUE(revoked) << revoked.error().message;
  EXPECT_EQ(revoked->name, "grafana");
  EXPECT_EQ(revoked->revoked_at, kNow);
  auto refused = auth->allow("Bearer " + grafana.value(), Role::kReader);
  EXPECT_EQ(kind_of(refused), "401");
  EXPECT_EQ(refused.error().message, "this token is revoked");
  // Again by id: nothing changes (the first time is kept); by name: none in force.
  EXPECT_EQ(auth->revoke_token({TokenChoice::By::kId, id}, kNow + 5)->revoked_at, kNow);
  EXPECT_EQ(kind_of(auth->revoke_token({TokenChoice::By::kName, "grafana"}, kNow)), "404");
  EXPECT_EQ(kind_of(auth->revoke_token({TokenChoice::By::kId, "0000000000000000"}, kNow)), "404");
  // A name two tokens share: revoke by id.
  EXPECT_EQ(kind_of(auth->revoke_token({TokenChoice::By::kName, "twin"}, kNow)), "409");
  EXPECT_TRUE(auth->allow("Bearer " + twin_a.value(), Role::kReader));
  // The enrollment secret by its name: no enrollment from then on.
  ASSERT_TRUE(auth->revoke_token({TokenChoice::By::kName, "enrollment (first start)"}, kNow));
  EXPECT_EQ(status_of(enroll(*auth, bearer("enrollment-secret"), "10.0.0.1", 1, kNow)), "401");
  // Saved before it took effect: a restart refuses them too.
  auth.reset();
  auto restarted = open();
  EXPECT_EQ(kind_of(restarted->allow("Bearer " + grafana.value(), Role::kReader)), "401");
  EXPECT_EQ(kind_of(restarted->allow(bearer("enrollment-secret"), Role::kEnrollment)), "401");
  EXPECT_TRUE(restarted->allow("Bearer " + twin_b.value(), Role::kReader));
  EXPECT_NE(read(credentials_path(auth_dir_)).find("revoked_at = " + std::to_string(kNow)),
            std::string::npos);
}

TEST_F(AuthenticatorTest, TheLastAdminTokenCannotBeRevoked) {
  auto auth = open();
  const std::string first = bearer("admin-token");
  auto refused = auth->revoke_token({TokenChoice::By::kName, "admin (first start)"}, kNow);
  EXPECT_EQ(kind_of(refused), "409");
  EXPECT_NE(refused.error().message.find("last admin token"), std::string::npos);
  EXPECT_TRUE(auth->allow(first, Role::kAdmin));
  // With a second admin the first goes; then the second is the last.
  auto second = auth->create_token(Role::kAdmin, "second admin");
  ASSERT_TRUE(second);
  EXPECT_TRUE(auth->revoke_token({TokenChoice::By::kName, "admin (first start)"}, kNow));
  EXPECT_EQ(kind_of(auth->allow(first, Role::kAdmin)), "401");
  EXPECT_EQ(kind_of(auth->revoke_token({TokenChoice::By::kName, "second admin"}, kNow)), "409");
  EXPECT_TRUE(auth->allow("Bearer " + second.value(), Role::kAdmin));
}

TEST_F(AuthenticatorTest, ARevokedDeviceIsRefusedByTokenCertificateAndEnrollmentUntilRestored) {
  auto auth = open();
  const std::string secret = bearer("enrollment-secret");
  auto old_key = enroll(*auth, secret, "10.0.0.1", 0xabc, kNow);
  ASSERT_TRUE(auth->rotate_device_key());
  auto new_key = enroll(*auth, secret, "10.0.0.1", 0xabc, kNow);
  auto other = enroll(*auth, secret, "10.0.0.1", 0xdef, kNow);
  ASSERT_TRUE(old_key && new_key && other);
  auto revoked = auth->revoke_device(0xabc, kNow);
  ASSERT_TRUE(revoked);
  EXPECT_EQ(revoked->revoked_at, kNow);
  // Every token for the nonce, whichever key signed it, and its certificate.
  for (const auto& token : {old_key->token, new_key->token}) {
    auto refused = auth->device("Bearer " + token, std::nullopt, kNow + 1);
    EXPECT_EQ(kind_of(refused), "401");
  }
  EXPECT_EQ(kind_of(auth->device("", 0xabc, kNow)), "401");
  EXPECT_EQ(status_of(enroll(*auth, secret, "10.0.0.2", 0xabc, kNow)), "403");
  EXPECT_EQ(auth->device("Bearer " + other->token, std::nullopt, kNow).value(), 0xdefu);
  // Revoking again keeps the first time; a restart still refuses.
  EXPECT_EQ(auth->revoke_device(0xabc, kNow + 9)->revoked_at, kNow);
  auth.reset();
  auth = open();
  ASSERT_EQ(auth->revoked_devices().size(), 1u);
  EXPECT_EQ(kind_of(auth->device("Bearer " + new_key->token, std::nullopt, kNow)), "401");
  // Restored: its unexpired tokens work again and it may enroll.
  EXPECT_TRUE(auth->restore_device(0xabc));
  EXPECT_EQ(kind_of(auth->restore_device(0xabc)), "404");
  EXPECT_TRUE(auth->device("Bearer " + old_key->token, std::nullopt, kNow));
  EXPECT_TRUE(enroll(*auth, secret, "10.0.0.2", 0xabc, kNow));
  // A certificate on the CRL is refused whatever token comes with it.
  auto crl = auth->device("Bearer " + other->token, 0xdef, kNow, /*certificate_revoked=*/true);
  EXPECT_EQ(kind_of(crl), "401");
  EXPECT_NE(crl.error().message.find("CRL"), std::string::npos);
}

// Two collectors sharing the credentials directory (two Authenticators on
// one directory, as two processes would be): what one changes, the other
// takes in within its reload interval, and neither loses the other's change.
class SharedCredentialsTest : public AuthenticatorTest {
 protected:
  void SetUp() override {
    AuthenticatorTest::SetUp();
    a_ = open();
    b_ = open();
    for (const char* name : {"A: ", "B: "}) {
      Authenticator* auth = name[0] == 'A' ? a_.get() : b_.get();
      auth->watch(std::chrono::milliseconds(50), [this, name](const std::string& line) {
        std::lock_guard<std::mutex> lock(log_mutex_);
        log_.push_back(name + line);
      });
    }
  }
  // Both look at the file if their interval has passed (as a request would
  // make them: they have no thread of their own).
  void poke() {
    (void)a_->tokens();
    (void)b_->tokens();
  }
  // Polls `condition` every 10 ms for up to 30 s; the milliseconds it took.
  template <typename Condition>
  double wait_for(Condition condition) {
    const auto start = std::chrono::steady_clock::now();
    while (!condition()) {
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(30)) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  }
  size_t log_lines_with(const std::string& text) {
    std::lock_guard<std::mutex> lock(log_mutex_);
    size_t n = 0;
    for (const std::string& line : log_) n += line.find(text) != std::string::npos;
    return n;
  }
  std::unique_ptr<Authenticator> a_, b_;
  std::mutex log_mutex_;
  std::vector<std::string> log_;
};

TEST_F(SharedCredentialsTest, WhatOneRevokesTheOtherRefusesWithinTheInterval) {
  const std::string reader = bearer("reader-token");
  auto device = enroll(*a_, bearer("enrollment-secret"), "10.0.0.1", 77, kNow);
  ASSERT_TRUE(device);
  ASSERT_TRUE(b_->allow(reader, Role::kReader));
  ASSERT_TRUE(b_->device("Bearer " + device->token, std::nullopt, kNow));

  ASSERT_TRUE(a_->revoke_token({TokenChoice::By::kName, "reader (first start)"}, kNow));
  ASSERT_TRUE(a_->revoke_device(77, kNow));
  EXPECT_EQ(kind_of(a_->allow(reader, Role::kReader)), "401");  // at once where it was made
  const double token_ms = wait_for([&] { return !b_->allow(reader, Role::kReader); });
  const double device_ms =
      wait_for([&] { return !b_->device("Bearer " + device->token, std::nullopt, kNow); });
  ASSERT_GE(token_ms, 0) << "B never refused the revoked reader token";
  ASSERT_GE(device_ms, 0) << "B never refused the revoked device";
  EXPECT_EQ(status_of(enroll(*b_, bearer("enrollment-secret"), "10.0.0.2", 77, kNow)), "403");
  std::printf(
      "B refused the revoked token after %.0f ms and the device after %.0f ms more "
      "(reload interval 50 ms)\n",
      token_ms, device_ms);
  EXPECT_GE(log_lines_with("B: reloaded the credentials"), 1u);
  EXPECT_EQ(log_lines_with("A: reloaded"), 0u);  // A wrote the file itself

  // Restored on B: A takes it in too.
  ASSERT_TRUE(b_->restore_device(77));
  EXPECT_GE(
      wait_for([&] { return a_->device("Bearer " + device->token, std::nullopt, kNow).ok(); }), 0);
}

TEST_F(SharedCredentialsTest, ChangesMadeOnBothAreBothKept) {
  // B has not looked at the file since A changed it: B's change is made to
  // the file as it is on disk, so A's token survives it.
  auto made_on_a = a_->create_token(Role::kReader, "made on A");
  ASSERT_TRUE(made_on_a);
  ASSERT_TRUE(b_->revoke_device(5, kNow));
  EXPECT_TRUE(b_->allow("Bearer " + made_on_a.value(), Role::kReader));  // B re-read the file
  const std::string file = read(credentials_path(auth_dir_));
  EXPECT_NE(file.find(to_hex(sha256(made_on_a.value()))), std::string::npos);
  EXPECT_NE(file.find("nonce = \"0000000000000005\""), std::string::npos);
  EXPECT_GE(wait_for([&] { return a_->revoked_devices().size() == 1; }), 0);
  EXPECT_TRUE(a_->allow("Bearer " + made_on_a.value(), Role::kReader));
}

TEST_F(SharedCredentialsTest, AnUnusableNewFileKeepsTheLastGoodCredentialsAndIsLoggedOnce) {
  const std::string path = credentials_path(auth_dir_);
  const std::string reader = bearer("reader-token");
  const std::string good = read(path) + "\n";
  auto replace = [&](const std::string& text, mode_t mode) {
    const std::string next = path + ".test";
    std::ofstream(next) << text;
    ASSERT_EQ(chmod(next.c_str(), mode), 0);
    ASSERT_EQ(std::rename(next.c_str(), path.c_str()), 0);
  };
  // Garbage: logged once, the reader still reads.
  replace("this is not TOML [[[", 0600);
  EXPECT_GE(wait_for([&] {
              poke();
              return log_lines_with("keeping the credentials") >= 2;
            }),
            0);
  for (int i = 0; i < 10; ++i) {  // 6 more intervals, looked at
    poke();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  EXPECT_EQ(log_lines_with("A: keeping the credentials"), 1u);
  EXPECT_EQ(log_lines_with("B: keeping the credentials"), 1u);
  EXPECT_TRUE(a_->allow(reader, Role::kReader));
  EXPECT_TRUE(b_->allow(reader, Role::kReader));
  // An admin change is refused while the file on disk is unusable.
  EXPECT_EQ(a_->create_token(Role::kReader, "x").error().kind, Error::Kind::kUnavailable);
  // A valid file others may read (one without the reader token): refused
  // like at start, fail closed; the reader still reads.
  Credentials without_reader = parse_credentials(good, "mem").value();
  without_reader.tokens.erase(without_reader.tokens.begin() + 1);  // admin, reader, enrollment
  replace(credentials_text(without_reader), 0644);
  EXPECT_GE(wait_for([&] {
              poke();
              return log_lines_with("mode 0644") >= 2;
            }),
            0);
  EXPECT_TRUE(b_->allow(reader, Role::kReader));
  // The same file, private: taken in.
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  EXPECT_GE(wait_for([&] { return !b_->allow(reader, Role::kReader); }), 0);
  // A missing file: logged, the last good kept.
  ASSERT_EQ(std::remove(path.c_str()), 0);
  EXPECT_GE(wait_for([&] {
              poke();
              return log_lines_with("cannot be read") >= 2;
            }),
            0);
  EXPECT_TRUE(b_->allow(bearer("admin-token"), Role::kAdmin));
}

TEST_F(AuthenticatorTest, APreCreatedDirectoryIsTightenedOrRefused) {
  // Readable by others (mkdir under umask 022): made 0700, nothing in it
  // could have been changed by them.
  ASSERT_EQ(mkdir(auth_dir_.c_str(), 0755), 0);
  ASSERT_EQ(chmod(auth_dir_.c_str(), 0755), 0);
  ASSERT_TRUE(open());
  struct stat info {};
  ASSERT_EQ(stat(auth_dir_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  // Writable by the group: someone else may have replaced a file in it.
  ASSERT_EQ(chmod(auth_dir_.c_str(), 0770), 0);
  FirstStart first;
  auto refused = Authenticator::open(auth_dir_, {}, &first);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("mode 0770"), std::string::npos)
      << refused.error().message;
  ASSERT_EQ(stat(auth_dir_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0770u);  // left for the operator to check
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
  const std::string key(64, 'a');
  auto parsed = parse_enrollment_request(R"({"device_nonce": "0123456789abcdef", "device_key": ")" +
                                         key + R"("})");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed->device_nonce, 0x0123456789abcdefu);
  EXPECT_EQ(parsed->device_key, digest_from_hex(key).value());
  EXPECT_EQ(parsed->device_token, "");
  parsed = parse_enrollment_request(R"({"device_nonce":"ffffffffffffffff","device_key":")" + key +
                                    R"(","device_token":"bt1-x"})");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->device_nonce, UINT64_MAX);
  EXPECT_EQ(parsed->device_token, "bt1-x");
  const std::string k = R"(", "device_key": ")" + key + R"("})";
  for (const std::string& bad :
       {std::string(), std::string("{}"), std::string("[]"), std::string("null"),
        R"({"device_nonce": 12, "device_key": ")" + key + R"("})",
        R"({"device_nonce": "0123)" + k, R"({"device_nonce": "0123456789ABCDEF)" + k,
        R"({"device_nonce": "0123456789abcdeg)" + k,
        R"({"device_nonce": "0123456789abcdef", "x": 1, "device_key": ")" + key + R"("})",
        R"({"device_nonce": "0123456789abcdef", "device_key": ")" + key.substr(1) + R"("})",
        R"({"device_nonce": "0123456789abcdef", "device_key": ")" + std::string(64, 'A') + R"("})",
        R"({"device_key": ")" + key + R"("})",
        R"({"device_nonce": "0123456789abcdef", "device_key": ")" + key + R"(", "device_token": ""})",
        R"({"device_nonce": "0123456789abcdef", "device_key": ")" + key + R"(", "device_token": ")" +
            std::string(129, 'a') + R"("})",
        R"({"device_nonce": "0123456789abcdef)" + k + " trailing"}) {
    auto refused = parse_enrollment_request(bad);
    EXPECT_FALSE(refused) << bad;
    if (!refused) {
      EXPECT_EQ(refused.error().kind, Error::Kind::kInvalid);
      EXPECT_NE(refused.error().message.find("device_key"), std::string::npos);
    }
  }
  EXPECT_FALSE(parse_enrollment_request(std::string(600, ' ') + R"({"device_nonce": "00"})"));
  // An SDK before device keys is told so.
  auto old = parse_enrollment_request(R"({"device_nonce": "0123456789abcdef"})");
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find("an SDK before device keys"), std::string::npos);
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
  c.tokens[0].revoked_at = 1795000000;
  c.revoked_devices.push_back({0x00000000000000a1, 1795000001});
  c.revoked_devices.push_back({UINT64_MAX, 0});
  auto with_revocations = parse_credentials(credentials_text(c), "mem");
  ASSERT_TRUE(with_revocations) << with_revocations.error().message;
  EXPECT_EQ(credentials_text(with_revocations.value()), credentials_text(c));
  EXPECT_EQ(with_revocations->revoked_devices[1].device_nonce, UINT64_MAX);
  const std::string key =
      "[[device_token_key]]\nid = 1\nsecret = \"" + std::string(64, '0') + "\"\n";
  for (const char* bad_revocation :
       {"[[revoked_device]]\nnonce = \"00a1\"", "[[revoked_device]]\nnonce = \"00000000000000A1\"",
        "[[revoked_device]]\nrevoked_at = 1",
        "[[revoked_device]]\nnonce = \"00000000000000a1\"\nrevoked_at = \"now\"",
        "[[revoked_device]]\nnonce = \"00000000000000a1\"\n[[revoked_device]]\nnonce = "
        "\"00000000000000a1\"",
        "[revoked_device]\nnonce = \"00000000000000a1\"",
        "[[revoked_device]]\nnonce = \"00000000000000a1\"\nrevoked_at = 1e21",
        "[[token]]\nrole = \"reader\"\nsha256 = \""
        "0000000000000000000000000000000000000000000000000000000000000000\"\nrevoked_at = 0"}) {
    EXPECT_FALSE(parse_credentials(key + bad_revocation, "mem")) << bad_revocation;
  }
  for (const char* bad : {"", "[[device_token_key]]\nid = 0\nsecret = \"00\"",
                          "x = 1\n[[device_token_key]]\nid = 1\nsecret = \"" 
                          "0000000000000000000000000000000000000000000000000000000000000000\"",
                          "[[device_token_key]\n"}) {
    EXPECT_FALSE(parse_credentials(bad, "mem")) << bad;
  }
}

}  // namespace
