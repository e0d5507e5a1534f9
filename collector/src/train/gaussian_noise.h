// Gaussian noise for the collector's central DP mechanisms (the DP
// vocabulary; usable by DP-SGD): uniforms from mbedTLS CTR_DRBG (AES-256,
// NIST SP 800-90A), seeded from getrandom(2) or, for reproducible tests and
// experiments, from an explicit 64-bit seed; normals by Box-Muller in double
// precision (docs/training-data.md):
//   u1 = (m1 + 1) * 2^-53 in (0, 1], u2 = m2 * 2^-53 in [0, 1), m = 53 DRBG bits,
//   z0 = sqrt(-2 ln u1) cos(2 pi u2), z1 = sqrt(-2 ln u1) sin(2 pi u2).
// |z| <= sqrt(106 ln 2) ~ 8.57: the tails beyond are truncated (mass < 1e-17).
// Floating-point samplers are not exact; the known attacks on them exploit
// the low-order bits of released noisy values, which the vocabulary never
// releases (only the ranking of the noisy counts).
#ifndef BLUR_COLLECTOR_TRAIN_GAUSSIAN_NOISE_H
#define BLUR_COLLECTOR_TRAIN_GAUSSIAN_NOISE_H

#include <cstddef>
#include <cstdint>

#include "mbedtls/ctr_drbg.h"

namespace blur::collector {

class GaussianNoise {
 public:
  // Seeded from the kernel CSPRNG (getrandom). Throws std::runtime_error if
  // it or the DRBG fails.
  GaussianNoise();
  // Deterministic: the DRBG's entropy input is SHA-256(label || seed || i).
  // For tests and reproducible experiments only; never for a real release.
  explicit GaussianNoise(uint64_t seed);
  ~GaussianNoise();
  GaussianNoise(const GaussianNoise&) = delete;
  GaussianNoise& operator=(const GaussianNoise&) = delete;

  uint64_t next_u64();
  // Uniform on [0, 1) with 53 random bits.
  double uniform();
  // Standard normal N(0, 1).
  double standard_normal();
  // N(0, stddev^2).
  double normal(double stddev) { return stddev * standard_normal(); }

 private:
  static int entropy(void* self, unsigned char* out, size_t length);
  void seed_drbg();

  bool deterministic_;
  uint64_t seed_;
  uint64_t entropy_calls_;
  mbedtls_ctr_drbg_context drbg_;
  static constexpr size_t kBufferSize = MBEDTLS_CTR_DRBG_MAX_REQUEST;
  unsigned char buffer_[kBufferSize];
  size_t buffer_used_;
  bool has_spare_;
  double spare_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_TRAIN_GAUSSIAN_NOISE_H
