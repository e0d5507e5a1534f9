// How simulated devices and readers prove who they are to a collector that
// requires it (the default): each device enrolls its nonce with the app's
// enrollment secret and its device key (POST /v1/enroll, the SDK's body:
// blur/enrollment.h) and sends the device token it gets on every POST;
// reads send a reader token.
//
// A simulated device's secret, from which its key derives, is
// HMAC-SHA256("blur-device-sim", nonce): the simulator's nonces have no
// ledger behind them. Anyone can compute it; it is for simulation only (a
// real device's secret is 32 random bytes in its ledger).
//
// Secrets come from files or the environment, never the command line
// (which other users of the machine can read in /proc):
//   --enrollment-secret-file F, else $BLUR_ENROLLMENT_SECRET
//   --reader-token-file F,      else $BLUR_READER_TOKEN
// Neither given: no credentials are sent (a collector started --no-auth).
#ifndef BLUR_TOOLS_DEVICE_SIM_ENROLLMENT_H
#define BLUR_TOOLS_DEVICE_SIM_ENROLLMENT_H

#include <httplib.h>

#include <cstdint>
#include <functional>
#include <string>

#include "options.h"

namespace blur::sim {

// Fills o->enrollment_secret and o->reader_token from their files or the
// environment. False with *error for an unreadable or empty file.
bool load_secrets(Options* o, std::string* error);

// "Authorization" headers for a token ("" sends none).
httplib::Headers bearer(const std::string& token);

struct EnrollResult {
  enum class Kind { kEnrolled, kRefused, kUnreachable };
  Kind kind = Kind::kUnreachable;
  std::string token;
  std::string error;
};

// The enrollment body of the simulated device `device_nonce`.
std::string simulated_enrollment_body(uint64_t device_nonce);

// POST /v1/enroll for `device_nonce`. Network failures, 5xx and 429 are
// retried (429 after its Retry-After, at most 5 s); other answers are final.
// `waiting` (if set) hears why before each wait: the failure, or the
// collector's status, Retry-After and body.
EnrollResult enroll(httplib::Client& client, const std::string& enrollment_secret,
                    uint64_t device_nonce, int retries,
                    const std::function<void(const std::string&)>& waiting = {});

// A worker's device token, enrolled once per device nonce.
class DeviceCredentials {
 public:
  DeviceCredentials(httplib::Client& client, const Options& o) : client_(client), o_(o) {}
  // The token for `device_nonce` ("" when the run has no enrollment secret).
  EnrollResult token_for(uint64_t device_nonce);

 private:
  httplib::Client& client_;
  const Options& o_;
  uint64_t nonce_ = 0;
  std::string token_;
};

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_ENROLLMENT_H
