// Exact discrete Gaussian noise: Z_0, Z_1, ... independent draws of
// N_Z(0, sigma^2), P(z) proportional to exp(-z^2 / (2 sigma^2)) on the
// integers, with sigma = 2^j (j = log2_sigma).
//
// Algorithm: Canonne, Kamath, Steinke, "The Discrete Gaussian for
// Differential Privacy" (NeurIPS 2020), Algorithm 3 (docs/math.md §4.8,
// ../reference MATH.md §3), with integers only: propose y from the
// discrete Laplace with scale t, accept with probability
// exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)). Any t > 0 is exact (the
// accepted mass is proportional to exp(-y^2/(2 sigma^2))); t = sigma = 2^j
// makes every rational in the algorithm dyadic, so each Bernoulli is a
// comparison of random bits (no division, no modulo bias) and the
// acceptance exponent (|y| - t)^2 / 2^(2j+1) fits in 64 bits. About 76%
// of proposals are accepted.
//
// Randomness: AES-256-CTR keyed from DrbgStream(seed, label, index), like
// gaussian_noise.h. Coordinates come in chunks of kChunk; chunk c reads
// the keystream from block c * 2^24 on, so a value depends only on
// (seed, label, index, its chunk) and any split over threads gives the same
// noise. Sampling time depends on the values drawn (CKS §5.4); each chunk
// fails closed (std::runtime_error) if it would run past its 2^24 blocks,
// which needs more than 64 times the expected draws.
#ifndef BLUR_COLLECTOR_TRAINER_RANDOM_DISCRETE_GAUSSIAN_H
#define BLUR_COLLECTOR_TRAINER_RANDOM_DISCRETE_GAUSSIAN_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "trainer/random/aes_ctr.h"
#include "trainer/random/drbg_stream.h"

namespace blur::collector {

class DiscreteGaussianNoise {
 public:
  static constexpr unsigned kMaxLog2Sigma = 30;
  static constexpr size_t kChunk = 4096;

  // allow_aes_ni = false forces the portable AES (same values).
  DiscreteGaussianNoise(const TrainSeed& seed, std::string_view label, uint64_t index,
                        bool allow_aes_ni = true);

  // out[k] = Z_k for k in [0, n), sigma = 2^log2_sigma (log2_sigma <=
  // kMaxLog2Sigma, else std::invalid_argument), over `threads` threads
  // (0: one per core); the values do not depend on the thread count.
  void sample(int64_t* out, size_t n, unsigned log2_sigma, unsigned threads = 0) const;

 private:
  void sample_chunks(int64_t* out, size_t n, unsigned log2_sigma, size_t first_chunk,
                     size_t last_chunk) const;
  std::unique_ptr<AesCtr> aes_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_TRAINER_RANDOM_DISCRETE_GAUSSIAN_H
