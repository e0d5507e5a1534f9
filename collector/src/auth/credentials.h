// The collector's credentials: the device-token keys and the digests of the
// bearer tokens (admin, reader, enrollment), in one TOML file that only its
// owner may read, beside the store:
//
//   [[device_token_key]]            # the newest id issues; every one verifies
//   id = 1
//   secret = "<64 hex>"
//   [[token]]
//   name = "admin (first start)"
//   role = "admin"                  # admin | reader | enrollment
//   sha256 = "<64 hex>"             # of the token; the token is not stored
//   revoked_at = 1795000000         # optional: revoked then (Unix s), refused since
//   [[revoked_device]]              # refused by nonce, token or certificate alike
//   nonce = "<16 hex>"
//   revoked_at = 1795000000
//   [device_tokens]
//   lifetime_days = 30              # optional
//
// A file readable or writable by group or others is refused (fail closed):
// with the keys anyone could mint device tokens. The directory is made (or
// tightened to) 0700; one that group or others may write is refused.
#ifndef BLUR_COLLECTOR_AUTH_CREDENTIALS_H
#define BLUR_COLLECTOR_AUTH_CREDENTIALS_H

#include <string>
#include <string_view>
#include <vector>

#include "auth/device_token.h"
#include "auth/secret.h"
#include "util/outcome.h"

namespace blur::collector::auth {

// What a bearer token may do. An admin may also read.
enum class Role { kReader, kAdmin, kEnrollment };
const char* role_name(Role role);

struct StoredToken {
  std::string name;
  Role role = Role::kReader;
  Digest sha256{};
  int64_t revoked_at = 0;  // Unix s; 0: in force
};

// A device nonce an admin revoked: its device tokens (and a certificate
// naming it) are refused and it cannot enroll, until an admin restores it.
struct RevokedDevice {
  uint64_t device_nonce = 0;
  int64_t revoked_at = 0;  // Unix s; 0: not recorded (added by hand)
};

struct Credentials {
  std::vector<DeviceTokenKey> device_token_keys;
  std::vector<StoredToken> tokens;
  std::vector<RevokedDevice> revoked_devices;
  uint32_t device_token_lifetime_days = 30;
};

// How the admin API names a stored token: the first 16 hex digits of its
// SHA-256 (as in the file, so an operator can find it there). A digest
// prefix tells nothing about the token: it is 256 random bits.
std::string token_id(const Digest& sha256);

// A fresh bearer token: "blur-<role>-<64 hex>" (256 random bits; the prefix
// only tells people what it is). kUnavailable if the kernel gives no
// randomness.
Outcome<std::string> new_bearer_token(Role role);

// Parses the file's text (untrusted: kInvalid naming the problem).
Outcome<Credentials> parse_credentials(std::string_view text, const std::string& source);
std::string credentials_text(const Credentials& credentials);

// Reads the file, refusing one that group or others may access.
Outcome<Credentials> load_credentials(const std::string& path);
// A bearer token kept in a file of its own (serve --monitoring-token-file):
// its one line without the trailing newline; kInvalid for a file that group
// or others may access (as the credentials), or not one token of 16 to 512
// printable characters.
Outcome<std::string> read_token_file(const std::string& path);
// Replaces the file atomically (a new file, fsync, rename, fsync of the
// directory), mode 0600.
Fallible save_credentials(const std::string& path, const Credentials& credentials);

// Writes `text` to a new file of mode 0600 (refusing to overwrite one).
Fallible write_private_file(const std::string& path, const std::string& text);

// Makes `directory` 0700 if group or others may list or enter it, and
// refuses it (kInvalid) if they may write it: then someone else may already
// have replaced the credentials or the token files in it, and the operator
// must look before the collector trusts them. kUnavailable if it cannot.
Fallible make_directory_private(const std::string& directory);

// At first start: the credentials file in `directory` (made 0700 if
// missing, made private as above if not) with one device-token key and an
// admin, a reader and an enrollment token, whose plain text goes to
// admin-token, reader-token and enrollment-secret beside it (0600) for the
// operator to hand out.
struct FirstStart {
  std::vector<std::string> token_files;  // the paths written
};
// Loads the directory's credentials file, or creates it as above when the
// directory has none (then `first_start` says what was written).
Outcome<Credentials> open_credentials(const std::string& directory, FirstStart* first_start);

std::string credentials_path(const std::string& directory);

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_CREDENTIALS_H
