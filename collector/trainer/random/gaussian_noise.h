// The run's one Gaussian sampler: Z_0, Z_1, ... standard normals where Z_i
// is a function of (seed, label, index, i) alone.
//
// Construction: the stream DrbgStream(seed, label, index) (CTR_DRBG) gives
// an AES-256 key and an 8-byte prefix; Z_i is Marsaglia and Tsang's
// ziggurat (256 layers) on the 64-bit word i of the AES-CTR keystream
// (aes_ctr.h; block i/2, bytes 8 (i mod 2) .. +8, little-endian). About
// 1% of words miss the ziggurat's rectangles; that normal then continues
// with words of its own side stream (the same key, the prefix with its top
// bit flipped, blocks i * 2^16 onwards), so no Z_i depends on another.
// Hence any split of [0, n) over threads yields the same noise, and a
// noise vector of a million normals is one pass of pipelined AES (AES-NI
// where the CPU has it) plus a table comparison per element.
//
// The words are cryptographically strong (AES-256-CTR under a key only
// the seed's holder can derive), which is what the privacy guarantee needs:
// whoever can predict the noise can subtract it.
#ifndef BLUR_TRAINER_RANDOM_GAUSSIAN_NOISE_H
#define BLUR_TRAINER_RANDOM_GAUSSIAN_NOISE_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "trainer/random/aes_ctr.h"
#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

class GaussianNoise {
 public:
  // allow_aes_ni = false forces the portable AES (for the equality tests).
  GaussianNoise(const TrainSeed& seed, std::string_view label, uint64_t index,
                bool allow_aes_ni = true);

  // Z_i. Requires i < 2^47.
  double normal(uint64_t i) const;
  // out[k] += stddev * Z_{first + k} for k in [0, n), rounded to Scalar.
  template <typename Scalar>
  void add(Scalar* out, size_t n, double stddev, uint64_t first = 0) const;
  // The same, split over `threads` threads (0: the machine's cores); the
  // result does not depend on the thread count.
  template <typename Scalar>
  void add_parallel(Scalar* out, size_t n, double stddev, unsigned threads = 0) const;

 private:
  double finish(uint64_t i, uint64_t first_word) const;

  std::unique_ptr<AesCtr> main_;
  std::unique_ptr<AesCtr> side_;
};

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_RANDOM_GAUSSIAN_NOISE_H
