// Discrete Gaussian noise: Z_0, Z_1, ... independent draws of N_Z(0, sigma^2),
// P(z) proportional to exp(-z^2 / (2 sigma^2)) on the integers, with
// sigma = 2^j (j = log2_sigma), drawn with integer arithmetic and exact
// comparisons (docs/math.md §6.8).
//
// Algorithm: rejection sampling (as in Canonne, Kamath, Steinke 2020, whose
// Algorithm 3 this replaces: 40x faster here, about 6 ns a draw; proposals
// are first classified in batches, four at a time in AVX2 where the CPU has
// it, which takes a quarter off that) from a
// proposal that costs a few table lookups and usually one 64-bit word: |z| falls in block b (width w = sigma / 16, or 1 for
// sigma < 16) with a dyadic probability W_b / T from an integer alias table
// (W_b >= 2^20 exp(-(b w)^2 / (2 sigma^2)), 256 blocks up to 16 sigma, then
// blocks with halving weights for the tail), uniformly inside the block,
// with a uniform sign; z is accepted with probability
//   A(z) = exp(-z^2 / (2 sigma^2)) * 2^20 / W_b  <= 1,
// so the accepted z have exactly the discrete Gaussian's distribution.
// The test U < A(z) compares a uniform U in [0, 1), read lazily in 64-bit
// words, with A(z), which is irrational: mostly (about 99%) on U's leading
// bits against a table's rigorous lower and upper bounds of A on the
// quarter block; else against A in double
// precision with a 2^-44 relative error margin; else (probability about
// 1e-13) against A in 128-bit fixed point (error below 2^-107) with 64 more
// bits of U. If even that cannot decide (|U - A| < 2^-103: probability
// below 2^-100 per draw), the draw fails closed (std::runtime_error) rather
// than guess. The outcome is a function of the random words alone, never
// of floating-point noise meeting data.
//
// Randomness: AES-256-CTR keyed from DrbgStream(seed, label, index), like
// gaussian_noise.h. Coordinates come in chunks of kChunk; chunk c reads
// the keystream from block c * 2^24 on, so a value depends only on
// (seed, label, index, its chunk) and any split over threads gives the same
// noise. Sampling time depends on the values drawn (rejections); each
// chunk fails closed if it would run past its 2^24 blocks (more than 3000
// times the expected use).
#ifndef BLUR_TRAINER_RANDOM_DISCRETE_GAUSSIAN_H
#define BLUR_TRAINER_RANDOM_DISCRETE_GAUSSIAN_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "trainer/random/aes_ctr.h"
#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

class DiscreteGaussianNoise {
 public:
  static constexpr unsigned kMaxLog2Sigma = 30;
  static constexpr size_t kChunk = 4096;

  // Which comparisons decide an acceptance: all three (the default), or
  // only the 128-bit one (tests: the rare path, checked on every draw).
  enum class Comparison { kFast, kAlways128Bit };

  // allow_simd = false forces the portable code: mbedTLS's AES instead of
  // AES-NI, and proposals classified one at a time instead of four at a
  // time in AVX2 (same values).
  DiscreteGaussianNoise(const TrainSeed& seed, std::string_view label, uint64_t index,
                        bool allow_simd = true, Comparison comparison = Comparison::kFast);

  // out[k] = Z_k for k in [0, n), sigma = 2^log2_sigma (log2_sigma <=
  // kMaxLog2Sigma, else std::invalid_argument), over `threads` threads
  // (0: one per core); the values do not depend on the thread count.
  void sample(int64_t* out, size_t n, unsigned log2_sigma, unsigned threads = 0) const;
  // out[k] = Z_{first + k} for k in [0, count), on the calling thread;
  // `first` must be a multiple of kChunk. The same values as sample()'s.
  void sample_range(int64_t* out, size_t first, size_t count, unsigned log2_sigma) const;

 private:
  void sample_chunks(int64_t* out, size_t n, unsigned log2_sigma, size_t first_chunk,
                     size_t last_chunk) const;
  void draw_chunk(size_t chunk, int64_t* out, size_t count, unsigned log2_sigma) const;
  std::unique_ptr<AesCtr> aes_;
  Comparison comparison_;
  bool avx2_ = false;
};

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_RANDOM_DISCRETE_GAUSSIAN_H
