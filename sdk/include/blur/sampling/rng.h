// The SDK's random source: mbedTLS CTR_DRBG (AES-256, NIST SP 800-90A),
// seeded and reseeded from the port's entropy callback through mbedTLS's
// SHA-256 entropy accumulator. Callers see only this class, so the mbedTLS
// version behind it can move.
//
// Fail closed: if seeding or a reseed fails, every later draw returns
// kEntropyFailure until seed() succeeds again.
#ifndef BLUR_RNG_H
#define BLUR_RNG_H

#include <stddef.h>
#include <stdint.h>

#include "blur/port.h"
#include "blur/status.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"

namespace blur {

class Rng {
 public:
  Rng();
  ~Rng();
  Rng(const Rng&) = delete;
  Rng& operator=(const Rng&) = delete;

  // Seeds the DRBG from port.entropy. `personalization` (may be empty) is
  // mixed into the seed, e.g. a device serial, per SP 800-90A.
  Status seed(const Port& port, const uint8_t* personalization, size_t personalization_length);

  bool seeded() const { return seeded_; }

  Status fill(uint8_t* out, size_t length);
  Status next_u32(uint32_t* out);
  Status next_u64(uint64_t* out);

  // Uniform in [0, bound) by rejection (uniform.h): no modulo bias;
  // bound == 0 is kInvalidArgument; kIterationCap after kMaxRejections
  // draws, which happens with probability < 2^-64.
  Status uniform(uint64_t bound, uint64_t* out);

 private:
  static int poll_port(void* rng, unsigned char* out, size_t length, size_t* produced);
  Status refill();

  Port port_;
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  bool seeded_;
  // DRBG output is drawn in blocks of kPoolSize bytes to amortize the
  // per-call cost of CTR_DRBG (its state update is 3 AES blocks).
  static constexpr size_t kPoolSize = 128;
  uint8_t pool_[kPoolSize];
  size_t pool_used_;
};

}  // namespace blur

#endif  // BLUR_RNG_H
