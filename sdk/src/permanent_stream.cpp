#include "blur/mechanisms/permanent_stream.h"

#include <string.h>

#include "blur/sampling/uniform.h"
#include "blur/storage/crc32.h"
#include "byte_pool.h"
#include "little_endian.h"
#include "mbedtls/platform_util.h"

namespace blur {

namespace {
constexpr char kTag[] = "blur.prr.v2";  // 11 bytes
static_assert(sizeof kTag - 1 == 11, "tag length");
}  // namespace

uint32_t memo_config_digest(uint32_t metric_id, MechanismId mechanism, EpsilonMicros epsilon,
                            uint32_t domain_size, EpsilonMicros longitudinal_epsilon,
                            uint32_t buckets) {
  uint8_t bytes[11 + 1 + 5 * 4];
  memcpy(bytes, kTag, 11);
  bytes[11] = static_cast<uint8_t>(mechanism);
  store_le32(bytes + 12, metric_id);
  store_le32(bytes + 16, epsilon);
  store_le32(bytes + 20, domain_size);
  store_le32(bytes + 24, longitudinal_epsilon);
  store_le32(bytes + 28, buckets);
  return crc32(bytes, sizeof bytes);
}

PermanentStream::PermanentStream(const uint8_t* secret, MemoKey key, uint32_t value)
    : secret_(secret) {
  memcpy(prefix_, kTag, 11);
  store_le32(prefix_ + 11, key.metric_id);
  store_le32(prefix_ + 15, key.config_digest);
  store_le32(prefix_ + 19, value);
}

PermanentStream::~PermanentStream() { mbedtls_platform_zeroize(block_, sizeof block_); }

Status PermanentStream::refill() {
  if (secret_ == nullptr) return Status::kInvalidArgument;
  uint8_t counter[4];
  store_le32(counter, counter_++);
  BLUR_TRY(hmac_sha256(secret_, kDeviceSecretSize, prefix_, sizeof prefix_, counter, sizeof counter,
                       block_));
  used_ = 0;
  return Status::kOk;
}

Status PermanentStream::fill(uint8_t* out, size_t length) {
  return fill_from_pool(block_, sizeof block_, &used_, false, out, length,
                        [this] { return refill(); }, kNoBulk);
}

Status PermanentStream::next_u32(uint32_t* out) { return draw_le32(*this, out); }

Status PermanentStream::next_u64(uint64_t* out) { return draw_le64(*this, out); }

Status PermanentStream::uniform(uint64_t bound, uint64_t* out) {
  return uniform_by_rejection(*this, bound, out);
}

}  // namespace blur
