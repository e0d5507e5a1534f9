#include "trainer/random/discrete_gaussian.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mbedtls/platform_util.h"

namespace blur::collector {

namespace {

constexpr int kBlocksPerChunkLog2 = 24;  // keystream blocks a chunk may read
constexpr size_t kBufferBlocks = 64;

// Uniform bits of one chunk's keystream region.
class ChunkBits {
 public:
  ChunkBits(const AesCtr& aes, uint64_t chunk)
      : aes_(aes),
        next_block_(chunk << kBlocksPerChunkLog2),
        end_block_((chunk + 1) << kBlocksPerChunkLog2) {}

  uint64_t word() {
    if (at_ == buffer_.size()) refill();
    return buffer_[at_++];
  }
  // n uniform bits, 0 <= n <= 64 (leftover reservoir bits are dropped:
  // the bits used stay independent and uniform).
  uint64_t bits(unsigned n) {
    if (n == 0) return 0;
    if (n == 64) return word();
    if (available_ < n) {
      reservoir_ = word();
      available_ = 64;
    }
    const uint64_t value = reservoir_ & ((uint64_t{1} << n) - 1);
    reservoir_ >>= n;
    available_ -= n;
    return value;
  }
  // Uniform in [0, m), m >= 1: Lemire's multiply-and-reject (exact).
  uint64_t below(uint64_t m) {
    unsigned __int128 product = static_cast<unsigned __int128>(word()) * m;
    auto low = static_cast<uint64_t>(product);
    if (low < m) {
      const uint64_t threshold = (0 - m) % m;
      while (low < threshold) {
        product = static_cast<unsigned __int128>(word()) * m;
        low = static_cast<uint64_t>(product);
      }
    }
    return static_cast<uint64_t>(product >> 64);
  }

 private:
  void refill() {
    if (end_block_ - next_block_ < kBufferBlocks) {
      throw std::runtime_error("DiscreteGaussianNoise: a chunk ran past its keystream");
    }
    uint8_t bytes[kBufferBlocks * 16];
    aes_.blocks(next_block_, kBufferBlocks, bytes);
    next_block_ += kBufferBlocks;
    for (size_t i = 0; i < buffer_.size(); ++i) {
      uint64_t v;
      std::memcpy(&v, bytes + 8 * i, 8);  // any fixed byte order is uniform
      buffer_[i] = v;
    }
    at_ = 0;
  }

  const AesCtr& aes_;
  uint64_t next_block_, end_block_;
  std::array<uint64_t, kBufferBlocks * 2> buffer_{};
  size_t at_ = kBufferBlocks * 2;
  uint64_t reservoir_ = 0;
  unsigned available_ = 0;
};

// Bern(n / (k 2^e)) for 0 <= n < 2^e, e <= 63, k >= 1: a uniform
// U k-ary digit and e bits X give U 2^e + X uniform on [0, k 2^e), which
// is below n iff U = 0 and X < n.
inline bool bernoulli(ChunkBits& r, uint64_t n, unsigned e, uint64_t k) {
  return (k == 1 || r.below(k) == 0) && r.bits(e) < n;
}

// Bern(exp(-n / 2^e)), n < 2^e (CKS Algorithm 1, gamma in [0, 1]):
// k = 1; while Bern(gamma / k) k++; return k odd.
inline bool bern_exp_fraction(ChunkBits& r, uint64_t n, unsigned e) {
  if (n == 0) return true;
  uint64_t k = 1;
  while (bernoulli(r, n, e, k)) ++k;
  return k & 1;
}

// Bern(exp(-1)): the same loop with gamma = 1 (its first Bern(1) is sure).
inline bool bern_exp_one(ChunkBits& r) {
  uint64_t k = 2;
  while (r.below(k) == 0) ++k;
  return k & 1;
}

// Bern(exp(-gamma)), gamma = whole + fraction / 2^e (CKS Algorithm 1).
inline bool bern_exp(ChunkBits& r, uint64_t whole, uint64_t fraction, unsigned e) {
  for (uint64_t i = 0; i < whole; ++i) {
    if (!bern_exp_one(r)) return false;
  }
  return bern_exp_fraction(r, fraction, e);
}

// Discrete Laplace, P(y) proportional to exp(-|y| / 2^j) (CKS Algorithm 2
// with s = 1, t = 2^j): |y| = u + t v, u accepted with exp(-u/t), v the
// successes of Bern(exp(-1)) before its first failure.
inline int64_t discrete_laplace(ChunkBits& r, unsigned j) {
  for (;;) {
    uint64_t u;
    do {
      u = r.bits(j);
    } while (!bern_exp_fraction(r, u, j));
    uint64_t v = 0;
    while (bern_exp_one(r)) ++v;
    const bool negative = r.bits(1) != 0;
    const uint64_t magnitude = u + (v << j);
    if (negative && magnitude == 0) continue;
    if (magnitude >> 40) throw std::runtime_error("DiscreteGaussianNoise: implausible draw");
    return negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
  }
}

// N_Z(0, 4^j) (CKS Algorithm 3 with t = sigma = 2^j): accept y with
// exp(-(|y| - t)^2 / (2 t^2)).
inline int64_t discrete_gaussian(ChunkBits& r, unsigned j) {
  const int64_t t = int64_t{1} << j;
  const unsigned e = 2 * j + 1;
  for (;;) {
    const int64_t y = discrete_laplace(r, j);
    const int64_t d = (y < 0 ? -y : y) - t;
    const auto square = static_cast<unsigned __int128>(static_cast<__int128>(d) * d);
    const auto whole = static_cast<uint64_t>(square >> e);
    const auto fraction = static_cast<uint64_t>(square & ((static_cast<unsigned __int128>(1) << e) - 1));
    if (bern_exp(r, whole, fraction, e)) return y;
  }
}

}  // namespace

DiscreteGaussianNoise::DiscreteGaussianNoise(const TrainSeed& seed, std::string_view label,
                                             uint64_t index, bool allow_aes_ni) {
  DrbgStream stream(seed, label, index);
  std::array<uint8_t, 32> key{};
  std::array<uint8_t, 8> prefix{};
  stream.fill(key.data(), key.size());
  stream.fill(prefix.data(), prefix.size());
  aes_ = std::make_unique<AesCtr>(key, prefix, allow_aes_ni);
  mbedtls_platform_zeroize(key.data(), key.size());
}

void DiscreteGaussianNoise::sample_chunks(int64_t* out, size_t n, unsigned j, size_t first_chunk,
                                          size_t last_chunk) const {
  for (size_t c = first_chunk; c < last_chunk; ++c) {
    ChunkBits bits(*aes_, c);
    const size_t end = std::min(n, (c + 1) * kChunk);
    for (size_t k = c * kChunk; k < end; ++k) out[k] = discrete_gaussian(bits, j);
  }
}

void DiscreteGaussianNoise::sample(int64_t* out, size_t n, unsigned log2_sigma,
                                   unsigned threads) const {
  if (log2_sigma > kMaxLog2Sigma) {
    throw std::invalid_argument("DiscreteGaussianNoise: sigma above 2^30");
  }
  if (n == 0) return;
  const size_t chunks = (n + kChunk - 1) / kChunk;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, chunks));
  if (threads <= 1) {
    sample_chunks(out, n, log2_sigma, 0, chunks);
    return;
  }
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> errors(threads);
  const size_t share = (chunks + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t) {
    const size_t begin = std::min(chunks, share * t), stop = std::min(chunks, share * (t + 1));
    workers.emplace_back([&, t, begin, stop] {
      try {
        sample_chunks(out, n, log2_sigma, begin, stop);
      } catch (...) {
        errors[t] = std::current_exception();
      }
    });
  }
  try {
    sample_chunks(out, n, log2_sigma, 0, std::min(chunks, share));
  } catch (...) {
    errors[0] = std::current_exception();
  }
  for (std::thread& w : workers) w.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace blur::collector
