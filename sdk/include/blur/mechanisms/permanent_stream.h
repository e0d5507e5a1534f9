// The deterministic randomness of a permanent randomized response (RAPPOR's
// PRR): the byte stream
//   HMAC-SHA256(secret, "blur.prr.v2" || metric_id (LE32) || config_digest (LE32)
//               || value (LE32) || counter (LE32)),  counter = 0, 1, 2, ...
// so the same device secret, metric configuration and value always give
// the same permanent response, and only the 32-byte secret is stored.
// Different metrics, configurations and values get independent streams
// (HMAC as a PRF): a metric configured again with another epsilon or
// mechanism would draw new permanent responses, which is why the ledger
// pins each memoized metric's digest (Ledger::charge_memoized).
#ifndef BLUR_PERMANENT_STREAM_H
#define BLUR_PERMANENT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/sampling/hmac_sha256.h"
#include "blur/status.h"

namespace blur {

inline constexpr size_t kDeviceSecretSize = 32;

// A memoized metric as its permanent streams and the ledger know it.
struct MemoKey {
  uint32_t metric_id;
  uint32_t config_digest;  // memo_config_digest() of its whole configuration
};

// CRC-32 of every parameter that shapes the metric's permanent responses
// (a version tag, the metric id, mechanism, both epsilons, domain, buckets).
uint32_t memo_config_digest(uint32_t metric_id, MechanismId mechanism, EpsilonMicros epsilon,
                            uint32_t domain_size, EpsilonMicros longitudinal_epsilon,
                            uint32_t buckets);

// Stream values no domain reaches (< 2^24): per-metric draws that must not
// depend on the value (drawn once per device and metric configuration).
inline constexpr uint32_t kAlphaStreamValue = 0xFFFFFFFFu;   // memoized_mean.h: alpha
inline constexpr uint32_t kCohortStreamValue = 0xFFFFFFFEu;  // memoized RAPPOR: the cohort
inline constexpr uint32_t kHashStreamValue = 0xFFFFFFFDu;    // loloha.h: the hash seed

class PermanentStream {
 public:
  PermanentStream(const uint8_t* secret, MemoKey key, uint32_t value);
  ~PermanentStream();
  PermanentStream(const PermanentStream&) = delete;
  PermanentStream& operator=(const PermanentStream&) = delete;

  Status fill(uint8_t* out, size_t length);
  Status next_u32(uint32_t* out);
  Status next_u64(uint64_t* out);
  Status uniform(uint64_t bound, uint64_t* out);  // uniform.h's rule

 private:
  Status refill();
  const uint8_t* secret_;
  uint8_t prefix_[11 + 4 + 4 + 4];  // tag, metric id, config digest, value
  uint32_t counter_ = 0;
  uint8_t block_[kHmacSha256Size];
  size_t used_ = kHmacSha256Size;
};

// What every memoized form built on a one-shot mechanism (memoized.h,
// memoized_mean.h) shares: the permanent response's mechanism at the
// longitudinal epsilon, the report epsilon each report charges, and the
// MemoKey of its permanent streams.
template <typename Permanent>
class MemoizedForm {
 public:
  MechanismId id() const { return permanent_.id(); }
  uint32_t domain_size() const { return permanent_.domain_size(); }
  EpsilonMicros epsilon_charged() const { return report_epsilon_; }
  EpsilonMicros longitudinal_epsilon() const { return permanent_.epsilon_charged(); }
  const Permanent& permanent() const { return permanent_; }
  MemoKey key() const { return key_; }

 protected:
  MemoizedForm(const Permanent& permanent, EpsilonMicros report_epsilon, MemoKey key)
      : permanent_(permanent), report_epsilon_(report_epsilon), key_(key) {}
  Permanent permanent_;
  EpsilonMicros report_epsilon_;
  MemoKey key_;
};

}  // namespace blur

#endif  // BLUR_PERMANENT_STREAM_H
