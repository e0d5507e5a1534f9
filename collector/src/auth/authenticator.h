// Who may do what: the one place the collector checks credentials.
//
//   device      POST /v1/reports   a device token (Authorization: Bearer bt1-...)
//                                  or a client certificate from the fleet's CA;
//                                  either binds one device nonce
//   enrollment  POST /v1/enroll    the app's enrollment secret: a device token
//                                  for the nonce the device names, bound at its
//                                  first enrollment to the device's key (a
//                                  renewal needs the same key); new devices
//                                  limited per source and per secret
//                                  (auth/enrollment_allowance.h), renewals
//                                  per device
//   reader      GET  /v1/metrics...  estimates, series, the metric list
//   admin       /v1/admin/...      and everything a reader may
//
// Missing, unknown or revoked credentials: kUnauthenticated (401);
// credentials that are valid but not for this: kForbidden (403); over an
// enrollment rate: kTooManyRequests (429); a nonce that belongs to another
// device: kConflict (409). Messages never echo a credential.
//
// Revocation (admin API): a bearer token is marked revoked in the
// credentials file; a device nonce is listed there, and then every device
// token for it, a certificate naming it and its enrollment are refused
// until an admin restores it. Device tokens stay stateless (a MAC, no
// database lookup): the revoked nonces are a set in memory. Collectors
// sharing the credentials directory take in each other's changes within
// the reload interval (watch()).
#ifndef BLUR_COLLECTOR_AUTH_AUTHENTICATOR_H
#define BLUR_COLLECTOR_AUTH_AUTHENTICATOR_H

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "auth/credentials.h"
#include "auth/device_registry.h"
#include "auth/enrollment_allowance.h"
#include "auth/enrollment_request.h"
#include "auth/rate_limiter.h"
#include "util/file_reloader.h"

namespace blur::collector::auth {

// A bound device's renewal sets last_renewed_at at most this often (a
// write per renewal would let a renewal loop make one per request).
inline constexpr int64_t kRenewalRecordSeconds = 3600;

// The token of an "Authorization: Bearer <token>" header value, or "".
std::string_view bearer_credential(std::string_view authorization);

// Which stored token an admin means: its id (token_id()) or its name.
struct TokenChoice {
  enum class By { kId, kName };
  By by = By::kId;
  std::string value;
};

class Authenticator {
 public:
  // Loads `directory`'s credentials, creating them at first start (then
  // `first_start` lists the token files written).
  static Outcome<std::unique_ptr<Authenticator>> open(const std::string& directory,
                                                      EnrollmentLimits limits,
                                                      FirstStart* first_start);
  // `stamp`: the version of the file at `path` that `credentials` are.
  Authenticator(std::string path, Credentials credentials, FileStamp stamp,
                EnrollmentLimits limits);

  // From now on, takes in the credentials file again when it changes,
  // looking at most every `interval` (FileReloader), and tells `log`.
  void watch(std::chrono::steady_clock::duration interval,
             std::function<void(const std::string&)> log);

  // Reads the credentials file now, changed or not (SIGHUP, POST
  // /v1/admin/reload): a summary ("3 tokens, ..."), or why it cannot be
  // used (the credentials held stay in force).
  Outcome<std::string> reload();

  // The device nonce this request may report for: the certificate's if the
  // connection presented one, else the device token's; never a revoked
  // device's. `certificate_revoked`: the connection's certificate is on the
  // CRL (then 401, whatever token comes with it).
  Outcome<uint64_t> device(std::string_view authorization,
                           std::optional<uint64_t> certificate_nonce, int64_t now,
                           bool certificate_revoked = false) const;

  // Whether the bearer token may act as `role` (an admin may read).
  Fallible allow(std::string_view authorization, Role role) const;

  // A device token for the request's nonce, by what `devices` knows of it:
  //   bound to this key         a renewal (renewals_per_device_per_hour)
  //   bound to another key      kConflict: it is another device's; nothing changes
  //   unbound, with reports     it reported before device keys (or is a
  //                             certificate device): bound only with a device
  //                             token this ring signed for it (expired or not),
  //                             else kConflict; then limited as a renewal
  //   unbound, no reports       a new device: EnrollmentAllowance, then bound
  // Two collectors binding one nonce at once: the first binding stands.
  Outcome<Enrollment> enroll(std::string_view authorization, std::string_view source_address,
                             const EnrollmentRequest& request, DeviceRegistry& devices,
                             int64_t now);

  // Admin actions, saved to the credentials file before they take effect.
  // A new bearer token (returned once; only its digest is kept).
  Outcome<std::string> create_token(Role role, std::string name);
  // Adds a device-token key with the next id: new tokens are signed with it,
  // those of the older keys stay valid until they expire.
  Outcome<uint32_t> rotate_device_key();
  // Every stored token, revoked ones included (with their revoked_at).
  std::vector<StoredToken> tokens() const;
  // Marks the token revoked: refused (401) from now on. A name that several
  // tokens in force share is a kConflict (revoke by id); the last admin
  // token in force is a kConflict (create another first), so the admin API
  // cannot lock itself out. Revoking a revoked token by id changes nothing.
  Outcome<StoredToken> revoke_token(const TokenChoice& choice, int64_t now);
  // Revokes a device nonce (again: changes nothing, keeps the first time).
  Outcome<RevokedDevice> revoke_device(uint64_t device_nonce, int64_t now);
  // Restores a revoked device nonce (kNotFound if it is not revoked): its
  // unexpired tokens work again, and it may enroll.
  Fallible restore_device(uint64_t device_nonce);
  std::vector<RevokedDevice> revoked_devices() const;

  uint32_t device_token_lifetime_days() const;

 private:
  // Takes in newly loaded credentials (a reload or an admin change).
  std::string install(Credentials credentials);
  // The stored token in force matching `authorization`'s bearer token, if
  // any; `revoked` says whether a revoked one matched instead.
  std::optional<StoredToken> find(std::string_view authorization, bool* revoked = nullptr) const;
  bool device_revoked(uint64_t device_nonce) const;
  // An admin change: applied to the file as it is on disk now, saved, then
  // in force.
  Fallible change(const std::function<Fallible(Credentials&)>& apply);
  Enrollment issue(uint64_t device_nonce, int64_t now) const;

  const std::string path_;
  mutable std::shared_mutex mutex_;  // guards credentials_, ring_ and revoked_
  Credentials credentials_;
  KeyRing ring_;
  std::unordered_set<uint64_t> revoked_;  // credentials_.revoked_devices' nonces
  EnrollmentAllowance new_devices_;
  RateLimiter renewals_;  // per device nonce
  // Reloads the file when it changes; calls install().
  std::unique_ptr<FileReloader<Credentials>> reloader_;
};

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_AUTHENTICATOR_H
