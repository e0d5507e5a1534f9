// Deterministic, cryptographically strong random streams for training.
//
// Every random choice of a training run (the DP vocabulary's noisy counts,
// initial weights, each step's Poisson sample, each step's Gaussian noise)
// comes from its own stream of the run's one seed:
// mbedTLS's CTR_DRBG (AES-256, NIST SP 800-90A) instantiated with the run's
// 256-bit secret seed as entropy input and (label, index) as the
// personalization string. A stream therefore depends only on
// (seed, label, index): a run resumed from a checkpoint at step k draws
// exactly the bytes an uninterrupted run draws at step k, whatever happened
// before. The DRBG is never reseeded within a stream (the reseed interval is
// set above any request count a stream can reach), so nothing but the seed
// enters it.
//
// The seed is the secret behind the privacy guarantee: whoever knows it can
// regenerate and subtract the noise. Draw it from the OS (from_os_entropy)
// and keep it (and checkpoints, which contain it) away from model consumers.
#ifndef BLUR_TRAINER_RANDOM_DRBG_STREAM_H
#define BLUR_TRAINER_RANDOM_DRBG_STREAM_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mbedtls/ctr_drbg.h"

namespace blur::trainer {

// 2^-53, exact: a 53-bit integer times this is a uniform double in [0, 1).
inline constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;

struct TrainSeed {
  std::array<uint8_t, 32> bytes{};

  // 256 bits from getrandom(2). Throws std::runtime_error if unavailable.
  static TrainSeed from_os_entropy();
  // For tests and reproducible experiments only: SHA-256 of the value's
  // 8 little-endian bytes. NOT secret; never use it for a private release.
  static TrainSeed from_u64(uint64_t value);

  bool operator==(const TrainSeed& other) const { return bytes == other.bytes; }
};

class DrbgStream {
 public:
  // Throws std::runtime_error if mbedTLS refuses to instantiate.
  DrbgStream(const TrainSeed& seed, std::string_view label, uint64_t index);
  ~DrbgStream();
  DrbgStream(const DrbgStream&) = delete;
  DrbgStream& operator=(const DrbgStream&) = delete;

  void fill(uint8_t* out, size_t length);
  uint64_t next_u64();  // 8 bytes, little-endian
  // Uniform on {0, 2^-53, ..., 1 - 2^-53}.
  double uniform53();
  // Bernoulli(p) exactly up to p's rounding to a multiple of 2^-64.
  bool bernoulli(double p);
  // Gaussian draws: gaussian_noise.h (keyed from a DrbgStream).

 private:
  void refill();

  mbedtls_ctr_drbg_context drbg_;
  // Draws are served from a pool of one maximal DRBG request, which
  // amortizes CTR_DRBG's per-request state update.
  std::array<uint8_t, MBEDTLS_CTR_DRBG_MAX_REQUEST> pool_{};
  size_t pool_used_;
};

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_RANDOM_DRBG_STREAM_H
