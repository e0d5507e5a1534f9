#include "trainer/random/gaussian_noise.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mbedtls/platform_util.h"
#include "trainer/random/run_in_shares.h"

namespace blur::trainer {

namespace {

constexpr uint64_t kMaxNormals = uint64_t{1} << 47;
// Blocks of side stream per normal: 2^17 words, where a normal needs about
// 1.01 on average and more than 100 with probability below 10^-190.
constexpr int kSideBlocksLog2 = 16;

// Marsaglia and Tsang's ziggurat for the standard normal with 256 layers of
// equal area v under f(x) = exp(-x^2/2): layer 0 is the base strip
// [0, v/f(r)] x [0, f(r)] (the part beyond r is the tail), layer i >= 1
// spans heights f(x[i]) .. f(x[i+1]) over [0, x[i]]. r is solved here so the
// top layer closes exactly at f = 1 (to double precision) rather than taken
// from a printed constant.
struct Ziggurat {
  static constexpr int kLayers = 256;
  double r = 0;
  double x[kLayers + 1] = {};
  double f[kLayers + 1] = {};

  Ziggurat() {
    auto density = [](double v) { return std::exp(-0.5 * v * v); };
    double lo = 3.0, hi = 4.0;
    for (int iteration = 0; iteration < 200 && lo < hi; ++iteration) {
      const double mid = 0.5 * (lo + hi);
      if (mid == lo || mid == hi) break;
      // 'true' when the layers built from `mid` reach the top too early or
      // leave the top layer more than its area: r must grow.
      const bool grow = build(mid, density) >= 0;
      (grow ? lo : hi) = mid;
    }
    build(lo, density);
  }

  // Fills the tables for tail start `start`; returns how far the top layer
  // misses: v/x[255] + f(x[255]) - 1 (> 0: too much area left over).
  template <typename Density>
  double build(double start, Density density) {
    r = start;
    const double v = r * density(r) + std::sqrt(M_PI / 2) * std::erfc(r / std::sqrt(2.0));
    x[0] = v / density(r);
    x[1] = r;
    for (int i = 1; i < kLayers - 1; ++i) {
      const double top = v / x[i] + density(x[i]);
      if (top >= 1) return 1;  // reached the mode before the last layer
      x[i + 1] = std::sqrt(-2 * std::log(top));
    }
    x[kLayers] = 0;
    for (int i = 0; i <= kLayers; ++i) f[i] = density(x[i]);
    return v / x[kLayers - 1] + density(x[kLayers - 1]) - 1;
  }
};

const Ziggurat& ziggurat() {
  static const Ziggurat tables;
  return tables;
}

inline uint64_t load_le64(const uint8_t* p) {
  uint64_t value;
  std::memcpy(&value, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  value = __builtin_bswap64(value);
#endif
  return value;
}

// One 64-bit word: bits 0-7 the layer, bit 8 the sign, bits 11-63 a 53-bit
// uniform. True (and *value set) when it lands in its layer's rectangle,
// as about 99% of words do.
inline bool rectangle(const Ziggurat& z, uint64_t w, double* value) {
  const auto layer = static_cast<int>(w & 0xFF);
  const double magnitude = static_cast<double>(w >> 11) * kTwoToMinus53 * z.x[layer];
  if (magnitude >= z.x[layer + 1]) return false;
  // The sign bit, without a branch that would miss half the time.
  uint64_t bits;
  std::memcpy(&bits, &magnitude, 8);
  bits ^= ((w >> 8) & 1) << 63;
  std::memcpy(value, &bits, 8);
  return true;
}

// Keystream words in blocks of 512 (8 KiB): enough to keep AES-NI's
// pipeline busy and the buffer in L1.
constexpr size_t kChunkBlocks = 512;

}  // namespace

GaussianNoise::GaussianNoise(const TrainSeed& seed, std::string_view label, uint64_t index,
                             bool allow_aes_ni) {
  DrbgStream stream(seed, label, index);
  std::array<uint8_t, 32> key{};
  std::array<uint8_t, 8> prefix{};
  stream.fill(key.data(), key.size());
  stream.fill(prefix.data(), prefix.size());
  std::array<uint8_t, 8> side_prefix = prefix;
  side_prefix[0] ^= 0x80;
  main_ = std::make_unique<AesCtr>(key, prefix, allow_aes_ni);
  side_ = std::make_unique<AesCtr>(key, side_prefix, allow_aes_ni);
  mbedtls_platform_zeroize(key.data(), key.size());
}

double GaussianNoise::finish(uint64_t i, uint64_t w) const {
  const Ziggurat& z = ziggurat();
  // Side-stream words of normal i, two per block.
  uint64_t side_word = 0;
  uint8_t block[16];
  auto next = [&]() -> uint64_t {
    if (side_word >> (kSideBlocksLog2 + 1)) {
      throw std::runtime_error("GaussianNoise: side stream exhausted");  // p < 1e-190
    }
    if (side_word % 2 == 0) side_->blocks((i << kSideBlocksLog2) + side_word / 2, 1, block);
    return load_le64(block + 8 * (side_word++ % 2));
  };
  auto uniform = [&] { return static_cast<double>(next() >> 11) * kTwoToMinus53; };
  for (bool first = true;; first = false) {
    if (!first) w = next();
    double value;
    if (rectangle(z, w, &value)) return value;
    const auto layer = static_cast<int>(w & 0xFF);
    const double sign = (w >> 8) & 1 ? -1.0 : 1.0;
    const double magnitude = static_cast<double>(w >> 11) * kTwoToMinus53 * z.x[layer];
    if (layer == 0) {
      // Tail beyond r (Marsaglia 1964): exponential proposals, accepted
      // with the normal's relative density.
      for (;;) {
        const double a = -std::log(1 - uniform()) / z.r;
        const double b = -std::log(1 - uniform());
        if (b + b >= a * a) return sign * (z.r + a);
      }
    }
    // Wedge between the layer's rectangle and the curve.
    const double y = z.f[layer] + uniform() * (z.f[layer + 1] - z.f[layer]);
    if (y < std::exp(-0.5 * magnitude * magnitude)) return sign * magnitude;
  }
}

double GaussianNoise::normal(uint64_t i) const {
  if (i >= kMaxNormals) throw std::invalid_argument("GaussianNoise: index out of range");
  uint8_t block[16];
  main_->blocks(i / 2, 1, block);
  const uint64_t w = load_le64(block + 8 * (i % 2));
  return finish(i, w);
}

template <typename Scalar>
void GaussianNoise::add(Scalar* out, size_t n, double stddev, uint64_t first) const {
  if (n == 0) return;
  if (first >= kMaxNormals || n > kMaxNormals - first) {
    throw std::invalid_argument("GaussianNoise: index out of range");
  }
  const Ziggurat& z = ziggurat();
  alignas(16) uint8_t buffer[kChunkBlocks * 16];
  uint64_t i = first;
  const uint64_t end = first + n;
  while (i < end) {
    // Blocks covering words i .. min(end, i + 2 * kChunkBlocks) - 1.
    const uint64_t first_block = i / 2;
    const uint64_t last_word = std::min<uint64_t>(end, (first_block + kChunkBlocks) * 2);
    const size_t count = static_cast<size_t>((last_word + 1) / 2 - first_block);
    main_->blocks(first_block, count, buffer);
    for (; i < last_word; ++i) {
      const uint64_t w = load_le64(buffer + 8 * (i - 2 * first_block));
      double value;
      if (!rectangle(z, w, &value)) value = finish(i, w);
      Scalar& target = out[i - first];
      target = static_cast<Scalar>(static_cast<double>(target) + stddev * value);
    }
  }
}

template <typename Scalar>
void GaussianNoise::add_parallel(Scalar* out, size_t n, double stddev, unsigned threads) const {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  if (threads == 1 || n < 65536) {
    add(out, n, stddev);
    return;
  }
  run_in_shares(n, threads,
                [&](size_t begin, size_t end) { add(out + begin, end - begin, stddev, begin); });
}

template void GaussianNoise::add<float>(float*, size_t, double, uint64_t) const;
template void GaussianNoise::add<double>(double*, size_t, double, uint64_t) const;
template void GaussianNoise::add_parallel<float>(float*, size_t, double, unsigned) const;
template void GaussianNoise::add_parallel<double>(double*, size_t, double, unsigned) const;

}  // namespace blur::trainer
