// Uniform integers in [0, bound) from a source of random words, by
// rejection: draws below (2^w mod bound) are discarded, so the final
// `% bound` has no bias. One rule for every random source (the DRBG, the
// permanent-response stream).
#ifndef BLUR_UNIFORM_H
#define BLUR_UNIFORM_H

#include <stdint.h>

#include "blur/status.h"

namespace blur {

// A cap on rejections: reached with probability < 2^-64, then kIterationCap.
inline constexpr int kMaxRejections = 64;

namespace uniform_detail {

template <typename Source>
Status next_word(Source& source, uint32_t* x) {
  return source.next_u32(x);
}
template <typename Source>
Status next_word(Source& source, uint64_t* x) {
  return source.next_u64(x);
}

// One rejection loop for either word width.
template <typename Word, typename Source>
Status uniform_below(Source& source, Word bound, uint64_t* out) {
  const Word reject_below = static_cast<Word>(Word{0} - bound) % bound;
  for (int i = 0; i < kMaxRejections; ++i) {
    Word x = 0;
    BLUR_TRY(next_word(source, &x));
    if (x >= reject_below) {
      *out = x % bound;
      return Status::kOk;
    }
  }
  return Status::kIterationCap;
}

}  // namespace uniform_detail

// Source: next_u32(uint32_t*) and next_u64(uint64_t*), each -> Status.
// 32-bit draws when the bound fits in 32 bits, else 64-bit draws.
template <typename Source>
Status uniform_by_rejection(Source& source, uint64_t bound, uint64_t* out) {
  if (bound == 0 || out == nullptr) return Status::kInvalidArgument;
  if (bound <= UINT32_MAX) {
    return uniform_detail::uniform_below(source, static_cast<uint32_t>(bound), out);
  }
  return uniform_detail::uniform_below(source, bound, out);
}

}  // namespace blur

#endif  // BLUR_UNIFORM_H
