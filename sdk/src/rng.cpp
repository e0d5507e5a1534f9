#include "blur/sampling/rng.h"

#include <string.h>

#include "blur/sampling/uniform.h"
#include "byte_pool.h"

namespace blur {

namespace {
// Bytes the accumulator must collect from the port before it may seed
// (32 = the SHA-256 accumulator's output, full entropy assumed).
constexpr size_t kEntropyThreshold = 32;
}  // namespace

// (pool_ is left unset: pool_used_ == kPoolSize refills it before any read.)
Rng::Rng() : port_(), seeded_(false), pool_used_(kPoolSize) {
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
}

Rng::~Rng() {
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
  mbedtls_platform_zeroize(pool_, sizeof pool_);
}

int Rng::poll_port(void* rng, unsigned char* out, size_t length, size_t* produced) {
  Rng* self = static_cast<Rng*>(rng);
  if (self->port_.entropy == nullptr ||
      self->port_.entropy(self->port_.context, out, length) != Status::kOk) {
    *produced = 0;
    return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
  }
  *produced = length;
  return 0;
}

Status Rng::seed(const Port& port, const uint8_t* personalization, size_t personalization_length) {
  if (port.entropy == nullptr) return Status::kInvalidArgument;
  seeded_ = false;
  pool_used_ = kPoolSize;
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
  port_ = port;
  if (mbedtls_entropy_add_source(&entropy_, &Rng::poll_port, this, kEntropyThreshold,
                                 MBEDTLS_ENTROPY_SOURCE_STRONG) != 0) {
    return Status::kEntropyFailure;
  }
  if (mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_, personalization,
                            personalization_length) != 0) {
    return Status::kEntropyFailure;
  }
  seeded_ = true;
  return Status::kOk;
}

Status Rng::refill() {
  if (!seeded_) return Status::kEntropyFailure;
  if (mbedtls_ctr_drbg_random(&drbg_, pool_, kPoolSize) != 0) {
    seeded_ = false;  // a failed reseed: fail closed until seed() succeeds
    return Status::kEntropyFailure;
  }
  pool_used_ = 0;
  return Status::kOk;
}

Status Rng::fill(uint8_t* out, size_t length) {
  // Used bytes never linger in the pool; long draws skip it: whole requests
  // straight into the caller's buffer (one DRBG state update per request).
  return fill_from_pool(
      pool_, kPoolSize, &pool_used_, true, out, length, [this] { return refill(); },
      [this](uint8_t* bulk, size_t remaining, size_t* taken) {
        if (!seeded_) return Status::kEntropyFailure;
        *taken = remaining < MBEDTLS_CTR_DRBG_MAX_REQUEST ? remaining
                                                           : MBEDTLS_CTR_DRBG_MAX_REQUEST;
        if (mbedtls_ctr_drbg_random(&drbg_, bulk, *taken) != 0) {
          seeded_ = false;
          return Status::kEntropyFailure;
        }
        return Status::kOk;
      });
}

Status Rng::next_u32(uint32_t* out) { return draw_le32(*this, out); }

Status Rng::next_u64(uint64_t* out) { return draw_le64(*this, out); }

Status Rng::uniform(uint64_t bound, uint64_t* out) {
  return uniform_by_rejection(*this, bound, out);
}

}  // namespace blur
