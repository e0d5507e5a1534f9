// What a report carries: a scalar (a bit or an index), a number, a hashed
// bucket with its seed, or a bit vector (unary encodings, Bloom filters).
#ifndef BLUR_REPORT_PAYLOAD_H
#define BLUR_REPORT_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "blur/config.h"
#include "blur/mechanisms/mechanism.h"

namespace blur {

// The largest bit-vector payload in bytes (config.h).
inline constexpr size_t kMaxBitVectorBytes = BLUR_MAX_BIT_VECTOR_BYTES;

struct ReportPayload {
  uint32_t value;      // scalar payload: the bit (rr) or the index (grr)
  int64_t number;      // numeric payload (discrete Laplace), in grid units
  uint32_t seed;       // hashed payload (local hashing): a << 16 | b, the bucket in `value`;
                       // Bloom payload (RAPPOR): the cohort, the filter in `bits`
  uint16_t bit_count;  // bit-vector payload: its length in bits; 0 for scalars
  uint8_t bits[kMaxBitVectorBytes];  // bit i is bits[i / 8] >> (i % 8) & 1
};

}  // namespace blur

#endif  // BLUR_REPORT_PAYLOAD_H
