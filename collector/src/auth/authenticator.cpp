#include "auth/authenticator.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <mutex>

namespace blur::collector::auth {

namespace {

Error forbidden(std::string message) { return {Error::Kind::kForbidden, std::move(message)}; }

std::string hex_nonce(uint64_t nonce) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(nonce));
  return text;
}

// A nonce that is another device's: refused, nothing changed (409: the
// request is authorized but conflicts with what the store holds, like a
// report id reused with other content).
Error taken(uint64_t nonce) {
  return {Error::Kind::kConflict,
          "device nonce " + hex_nonce(nonce) +
              " is enrolled with another device key: a device enrolls with the key its own "
              "secret derives (the SDK's enrollment body); nothing was changed"};
}

bool is_device_token(std::string_view token) { return token.substr(0, 4) == "bt1-"; }

// "a reader token", "an admin token".
std::string a_token(Role role) {
  return std::string(role == Role::kReader ? "a " : "an ") + role_name(role) + " token";
}

// Only created from validated credentials (parse_credentials: at least
// one key, ids unique).
KeyRing ring_of(const Credentials& credentials) {
  auto ring = KeyRing::create(credentials.device_token_keys);
  return std::move(ring).value();
}

size_t admins_in_force(const Credentials& credentials) {
  return static_cast<size_t>(std::count_if(
      credentials.tokens.begin(), credentials.tokens.end(),
      [](const StoredToken& t) { return t.role == Role::kAdmin && t.revoked_at == 0; }));
}

}  // namespace

std::string_view bearer_credential(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() || authorization[kScheme.size()] != ' ') return {};
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return {};
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return token;
}

Outcome<std::unique_ptr<Authenticator>> Authenticator::open(const std::string& directory,
                                                            EnrollmentLimits limits,
                                                            FirstStart* first_start) {
  const std::string path = credentials_path(directory);
  // Before reading: a change after this is seen at the first look.
  const FileStamp stamp = stamp_of(path);
  auto credentials = open_credentials(directory, first_start);
  if (!credentials) return credentials.error();
  return std::make_unique<Authenticator>(path, std::move(credentials).value(),
                                         stamp.exists ? stamp : stamp_of(path), limits);
}

Authenticator::Authenticator(std::string path, Credentials credentials, FileStamp stamp,
                             EnrollmentLimits limits)
    : path_(std::move(path)),
      ring_(ring_of(credentials)),
      new_devices_(limits),
      renewals_(limits.renewals_per_device_per_hour) {
  install(std::move(credentials));
  reloader_ = std::make_unique<FileReloader<Credentials>>(
      path_, "credentials", stamp, load_credentials,
      [this](Credentials loaded) { return install(std::move(loaded)); });
}

Outcome<std::string> Authenticator::reload() { return reloader_->reload(); }

void Authenticator::watch(std::chrono::steady_clock::duration interval,
                          std::function<void(const std::string&)> log) {
  reloader_->watch(interval, std::move(log));
}

std::string Authenticator::install(Credentials credentials) {
  KeyRing ring = ring_of(credentials);
  std::unordered_set<uint64_t> revoked;
  for (const RevokedDevice& device : credentials.revoked_devices)
    revoked.insert(device.device_nonce);
  const size_t revoked_tokens =
      static_cast<size_t>(std::count_if(credentials.tokens.begin(), credentials.tokens.end(),
                                        [](const StoredToken& t) { return t.revoked_at != 0; }));
  const std::string summary = std::to_string(credentials.device_token_keys.size()) +
                              " device-token keys, " +
                              std::to_string(credentials.tokens.size() - revoked_tokens) +
                              " tokens in force, " + std::to_string(revoked_tokens) + " revoked, " +
                              std::to_string(revoked.size()) + " revoked devices";
  std::unique_lock lock(mutex_);
  ring_ = std::move(ring);
  revoked_ = std::move(revoked);
  credentials_ = std::move(credentials);
  return summary;
}

std::optional<StoredToken> Authenticator::find(std::string_view authorization,
                                               bool* revoked) const {
  reloader_->refresh();
  if (revoked != nullptr) *revoked = false;
  const std::string_view token = bearer_credential(authorization);
  if (token.empty()) return std::nullopt;
  const Digest digest = sha256(token);
  std::shared_lock lock(mutex_);
  std::optional<StoredToken> found;
  // Every entry is compared, in constant time each.
  for (const StoredToken& stored : credentials_.tokens) {
    if (equal_in_constant_time(stored.sha256, digest)) found = stored;
  }
  if (found && found->revoked_at != 0) {
    if (revoked != nullptr) *revoked = true;
    return std::nullopt;
  }
  return found;
}

bool Authenticator::device_revoked(uint64_t device_nonce) const {
  std::shared_lock lock(mutex_);
  return revoked_.count(device_nonce) != 0;
}

Outcome<uint64_t> Authenticator::device(std::string_view authorization,
                                        std::optional<uint64_t> certificate_nonce, int64_t now,
                                        bool certificate_revoked) const {
  reloader_->refresh();
  if (certificate_revoked) {
    return unauthenticated("this client certificate is revoked (the collector's CRL lists it)");
  }
  uint64_t nonce = 0;
  if (certificate_nonce) {
    nonce = *certificate_nonce;
  } else {
    const std::string_view token = bearer_credential(authorization);
    if (token.empty()) {
      return unauthenticated(
          "a device proves who it is: send Authorization: Bearer <device token> (POST /v1/enroll "
          "issues one) or a client certificate from the fleet's CA");
    }
    if (!is_device_token(token)) {
      if (const auto stored = find(authorization)) {
        return forbidden(a_token(stored->role) +
                         " cannot post reports; devices use a device token");
      }
      return unauthenticated("unknown token; devices use a device token from POST /v1/enroll");
    }
    std::shared_lock lock(mutex_);
    auto claims = ring_.verify(token, now);
    if (!claims) return claims.error();
    nonce = claims->device_nonce;
  }
  if (device_revoked(nonce)) {
    return unauthenticated(
        "this device is revoked: an admin must restore it before it reports or enrolls again");
  }
  return nonce;
}

Fallible Authenticator::allow(std::string_view authorization, Role role) const {
  const std::string_view token = bearer_credential(authorization);
  if (token.empty()) {
    return unauthenticated("this needs " + a_token(role) + ": send Authorization: Bearer <token>");
  }
  bool revoked = false;
  const auto stored = find(authorization, &revoked);
  if (!stored) {
    if (revoked) return unauthenticated("this token is revoked");
    if (is_device_token(token)) {
      return forbidden("a device token cannot do this; it needs " + a_token(role));
    }
    return unauthenticated("unknown token");
  }
  const bool allowed = stored->role == role || (role == Role::kReader && stored->role == Role::kAdmin);
  if (!allowed) {
    return forbidden(a_token(stored->role) + " cannot do this; it needs " + a_token(role));
  }
  return done();
}

Enrollment Authenticator::issue(uint64_t device_nonce, int64_t now) const {
  Enrollment out;
  out.device_nonce = device_nonce;
  std::shared_lock lock(mutex_);
  out.expires_at = now + int64_t{86400} * credentials_.device_token_lifetime_days;
  out.token = ring_.issue(device_nonce, out.expires_at);
  return out;
}

Fallible Authenticator::change(const std::function<Fallible(Credentials&)>& apply) {
  return reloader_->change([&](Credentials next) -> Outcome<Credentials> {
    const std::string before = credentials_text(next);
    if (auto applied = apply(next); !applied) return applied.error();
    if (credentials_text(next) == before) return next;  // nothing to write
    if (auto saved = save_credentials(path_, next); !saved) return saved.error();
    return next;
  });
}

Outcome<Enrollment> Authenticator::enroll(std::string_view authorization,
                                          std::string_view source_address,
                                          const EnrollmentRequest& request,
                                          DeviceRegistry& devices, int64_t now) {
  if (auto allowed = allow(authorization, Role::kEnrollment); !allowed) return allowed.error();
  const uint64_t nonce = request.device_nonce;
  if (device_revoked(nonce)) {
    return forbidden("this device is revoked: it cannot enroll until an admin restores it");
  }
  // Only the key's digest is compared and stored: a copy of the database
  // does not let anyone renew as the device.
  const Digest key = sha256(std::string_view(
      reinterpret_cast<const char*>(request.device_key.data()), request.device_key.size()));
  const auto clock = RateLimiter::Clock::now();
  const std::string renewal_key(reinterpret_cast<const char*>(&nonce), sizeof nonce);
  auto renewal_allowed = [&]() -> Fallible {
    uint32_t retry_after = 0;
    if (renewals_.allow(renewal_key, clock, &retry_after)) return done();
    return Error{Error::Kind::kTooManyRequests, "too many enrollments of this device; retry later",
                 retry_after};
  };

  auto bound = devices.binding(nonce);
  if (!bound) return bound.error();
  if (bound.value()) {
    if (!equal_in_constant_time(bound.value()->key_sha256, key)) return taken(nonce);
    if (auto allowed = renewal_allowed(); !allowed) return allowed.error();
    if (now - bound.value()->last_renewed_at >= kRenewalRecordSeconds) {
      if (auto recorded = devices.renewed(nonce, now); !recorded) return recorded.error();
    }
    Enrollment renewed = issue(nonce, now);
    renewed.renewal = true;
    return renewed;
  }
  auto reported = devices.has_reports(nonce);
  if (!reported) return reported.error();
  if (reported.value()) {
    // Reports but no key: a device from before keys, or a certificate
    // device. Only a token this ring signed for the nonce proves the
    // requester is it (the nonce alone is public: it is in every token).
    bool proven = false;
    if (!request.device_token.empty()) {
      std::shared_lock lock(mutex_);
      const auto claims = ring_.verify_signature(request.device_token);
      proven = claims && claims->device_nonce == nonce;
    }
    if (!proven) {
      return Error{Error::Kind::kConflict,
                   "device nonce " + hex_nonce(nonce) +
                       " has reports but no device key yet (it enrolled before device keys): "
                       "send the device token this collector issued it as \"device_token\" to "
                       "bind the key; nothing was changed"};
    }
    if (auto allowed = renewal_allowed(); !allowed) return allowed.error();
  } else {
    // The secret's bucket is keyed by its digest: the secret itself is not kept.
    const Digest secret = sha256(bearer_credential(authorization));
    if (auto admitted = new_devices_.take(
            std::string_view(reinterpret_cast<const char*>(secret.data()), secret.size()),
            source_address, clock);
        !admitted) {
      return admitted.error();
    }
  }
  auto stored = devices.bind(nonce, key, now);
  if (!stored) return stored.error();
  // Another collector may have bound it since we looked: its binding stands.
  if (!equal_in_constant_time(stored->key_sha256, key)) return taken(nonce);
  Enrollment enrolled = issue(nonce, now);
  enrolled.renewal = reported.value();
  return enrolled;
}

Outcome<std::string> Authenticator::create_token(Role role, std::string name) {
  auto token = new_bearer_token(role);
  if (!token) return token.error();
  auto changed = change([&](Credentials& next) {
    next.tokens.push_back({std::move(name), role, sha256(token.value())});
    return done();
  });
  if (!changed) return changed.error();
  return token;
}

Outcome<uint32_t> Authenticator::rotate_device_key() {
  auto secret = random_secret();
  if (!secret) return secret.error();
  uint32_t id = 0;
  auto changed = change([&](Credentials& next) -> Fallible {
    for (const DeviceTokenKey& key : next.device_token_keys) id = std::max(id, key.id);
    if (id == UINT32_MAX) return invalid("device token key ids are exhausted");
    next.device_token_keys.push_back({++id, secret.value()});
    return done();
  });
  if (!changed) return changed.error();
  return id;
}

std::vector<StoredToken> Authenticator::tokens() const {
  reloader_->refresh();
  std::shared_lock lock(mutex_);
  return credentials_.tokens;
}

Outcome<StoredToken> Authenticator::revoke_token(const TokenChoice& choice, int64_t now) {
  StoredToken revoked;
  auto changed = change([&](Credentials& next) -> Fallible {
    const bool by_id = choice.by == TokenChoice::By::kId;
    StoredToken* chosen = nullptr;
    size_t matches = 0;
    for (StoredToken& token : next.tokens) {
      const bool match = by_id ? token_id(token.sha256) == choice.value
                               : token.revoked_at == 0 && token.name == choice.value;
      if (match) {
        chosen = &token;
        ++matches;
      }
    }
    if (matches == 0) {
      return Error{Error::Kind::kNotFound,
                   by_id ? "no token has this id (GET /v1/admin/tokens lists them)"
                         : "no token in force has this name (GET /v1/admin/tokens lists them)"};
    }
    if (matches > 1) {
      return Error{Error::Kind::kConflict,
                   std::to_string(matches) + " tokens " +
                       (by_id ? "share this id" : "in force share this name") +
                       ": revoke by id (GET /v1/admin/tokens lists them)"};
    }
    if (chosen->revoked_at == 0) {
      if (chosen->role == Role::kAdmin && admins_in_force(next) == 1) {
        return Error{Error::Kind::kConflict,
                     "the last admin token in force cannot be revoked: create another admin "
                     "token first (POST /v1/admin/tokens)"};
      }
      chosen->revoked_at = now;
    }
    revoked = *chosen;
    return done();
  });
  if (!changed) return changed.error();
  return revoked;
}

Outcome<RevokedDevice> Authenticator::revoke_device(uint64_t device_nonce, int64_t now) {
  RevokedDevice revoked{device_nonce, now};
  auto changed = change([&](Credentials& next) {
    for (const RevokedDevice& device : next.revoked_devices) {
      if (device.device_nonce == device_nonce) {
        revoked = device;
        return done();
      }
    }
    next.revoked_devices.push_back(revoked);
    return done();
  });
  if (!changed) return changed.error();
  return revoked;
}

Fallible Authenticator::restore_device(uint64_t device_nonce) {
  return change([&](Credentials& next) -> Fallible {
    auto& devices = next.revoked_devices;
    const auto found = std::find_if(devices.begin(), devices.end(), [&](const RevokedDevice& d) {
      return d.device_nonce == device_nonce;
    });
    if (found == devices.end()) return Error{Error::Kind::kNotFound, "this device is not revoked"};
    devices.erase(found);
    return done();
  });
}

std::vector<RevokedDevice> Authenticator::revoked_devices() const {
  reloader_->refresh();
  std::shared_lock lock(mutex_);
  return credentials_.revoked_devices;
}

uint32_t Authenticator::device_token_lifetime_days() const {
  std::shared_lock lock(mutex_);
  return credentials_.device_token_lifetime_days;
}

}  // namespace blur::collector::auth
