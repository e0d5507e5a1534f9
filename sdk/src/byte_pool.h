// The draw both of the SDK's byte sources share (Rng: CTR_DRBG output;
// PermanentStream: HMAC blocks): bytes handed out in order from a pool the
// source refills when it is used up, and integers read from those bytes
// little-endian, so a draw's bytes never depend on how it was split.
#ifndef BLUR_SRC_BYTE_POOL_H
#define BLUR_SRC_BYTE_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blur/status.h"
#include "little_endian.h"
#include "mbedtls/platform_util.h"

namespace blur {

// Copies `length` bytes from pool[*used..size) to `out`, calling refill()
// (which refills the pool and sets *used = 0) whenever it is used up.
// `wipe`: the bytes handed out are zeroized in the pool. While the pool is
// empty and at least `size` bytes remain, bulk(out, length, &taken) may
// write `taken` bytes straight into `out` instead (a source without such a
// path passes kNoBulk).
template <typename Refill, typename Bulk>
Status fill_from_pool(uint8_t* pool, size_t size, size_t* used, bool wipe, uint8_t* out,
                      size_t length, Refill&& refill, Bulk&& bulk) {
  while (length > 0) {
    size_t take = 0;
    if (*used == size && length >= size) BLUR_TRY(bulk(out, length, &take));
    if (take == 0) {
      if (*used == size) BLUR_TRY(refill());
      take = size - *used;
      if (take > length) take = length;
      memcpy(out, pool + *used, take);
      if (wipe) mbedtls_platform_zeroize(pool + *used, take);
      *used += take;
    }
    out += take;
    length -= take;
  }
  return Status::kOk;
}
inline constexpr auto kNoBulk = [](uint8_t*, size_t, size_t* taken) {
  *taken = 0;
  return Status::kOk;
};

// The next 4 or 8 bytes of `source` (its fill()) as a little-endian integer.
template <typename Source>
Status draw_le32(Source& source, uint32_t* out) {
  uint8_t bytes[4];
  BLUR_TRY(source.fill(bytes, sizeof bytes));
  *out = load_le32(bytes);
  return Status::kOk;
}
template <typename Source>
Status draw_le64(Source& source, uint64_t* out) {  // the same bytes as one fill of 8
  uint32_t low = 0, high = 0;
  BLUR_TRY(draw_le32(source, &low));
  BLUR_TRY(draw_le32(source, &high));
  *out = uint64_t{high} << 32 | low;
  return Status::kOk;
}

}  // namespace blur

#endif  // BLUR_SRC_BYTE_POOL_H
