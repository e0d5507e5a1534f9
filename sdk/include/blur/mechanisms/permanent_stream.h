// The deterministic randomness of a permanent randomized response (RAPPOR's
// PRR): the byte stream
//   HMAC-SHA256(secret, "blur.prr.v1" || metric_id (LE32) || value (LE32)
//               || counter (LE32)),  counter = 0, 1, 2, ...
// so the same device secret, metric and value always give the same
// permanent response, and only the 32-byte secret is stored. Different
// metrics and values get independent streams (HMAC as a PRF).
#ifndef BLUR_PERMANENT_STREAM_H
#define BLUR_PERMANENT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "blur/sampling/hmac_sha256.h"
#include "blur/status.h"

namespace blur {

inline constexpr size_t kDeviceSecretSize = 32;

class PermanentStream {
 public:
  PermanentStream(const uint8_t* secret, uint32_t metric_id, uint32_t value);
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
  uint8_t prefix_[11 + 4 + 4];  // tag, metric id, value
  uint32_t counter_ = 0;
  uint8_t block_[kHmacSha256Size];
  size_t used_ = kHmacSha256Size;
};

}  // namespace blur

#endif  // BLUR_PERMANENT_STREAM_H
