#include "trainer/random/drbg_stream.h"

#include <sys/random.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mbedtls/platform_util.h"
#include "mbedtls/sha256.h"

namespace blur::collector {

namespace {

// The entropy callback hands CTR_DRBG the seed exactly once (instantiation
// asks for entropy_len = 32 bytes and, with nonce_len = 0, nothing else).
// Any later request would be a reseed, which a stream must never do: fail.
struct SeedSource {
  const TrainSeed* seed;
  bool used;
};

int seed_entropy(void* context, unsigned char* out, size_t length) {
  auto* source = static_cast<SeedSource*>(context);
  if (source->used || length != source->seed->bytes.size()) {
    return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
  }
  std::memcpy(out, source->seed->bytes.data(), length);
  source->used = true;
  return 0;
}

int refuse_reseed(void*, unsigned char*, size_t) {
  return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

}  // namespace

TrainSeed TrainSeed::from_os_entropy() {
  TrainSeed seed;
  size_t got = 0;
  while (got < seed.bytes.size()) {
    const ssize_t n = getrandom(seed.bytes.data() + got, seed.bytes.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("getrandom failed");
    }
    got += static_cast<size_t>(n);
  }
  return seed;
}

TrainSeed TrainSeed::from_u64(uint64_t value) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(value >> (8 * i));
  TrainSeed seed;
  if (mbedtls_sha256_ret(le, sizeof le, seed.bytes.data(), 0) != 0) {
    throw std::runtime_error("SHA-256 failed");
  }
  return seed;
}

DrbgStream::DrbgStream(const TrainSeed& seed, std::string_view label, uint64_t index)
    : pool_used_(pool_.size()) {
  mbedtls_ctr_drbg_init(&drbg_);
  // Personalization: "blur-train/" || label || 0x00 || index (8 bytes LE).
  std::vector<unsigned char> personalization;
  const std::string_view prefix = "blur-train/";
  personalization.insert(personalization.end(), prefix.begin(), prefix.end());
  personalization.insert(personalization.end(), label.begin(), label.end());
  personalization.push_back(0);
  for (int i = 0; i < 8; ++i)
    personalization.push_back(static_cast<unsigned char>(index >> (8 * i)));
  if (personalization.size() > MBEDTLS_CTR_DRBG_MAX_SEED_INPUT - seed.bytes.size()) {
    mbedtls_ctr_drbg_free(&drbg_);
    throw std::invalid_argument("DrbgStream: label too long");
  }
  SeedSource source{&seed, false};
  mbedtls_ctr_drbg_set_entropy_len(&drbg_, seed.bytes.size());
  int rc = mbedtls_ctr_drbg_set_nonce_len(&drbg_, 0);
  if (rc == 0) {
    rc = mbedtls_ctr_drbg_seed(&drbg_, seed_entropy, &source, personalization.data(),
                               personalization.size());
  }
  // The seed source lives on this stack frame: a reseed (which the interval
  // below rules out anyway) must fail closed instead of reaching it.
  drbg_.f_entropy = refuse_reseed;
  drbg_.p_entropy = nullptr;
  mbedtls_ctr_drbg_set_reseed_interval(&drbg_, INT_MAX);
  if (rc != 0) {
    mbedtls_ctr_drbg_free(&drbg_);
    throw std::runtime_error("DrbgStream: CTR_DRBG instantiation failed");
  }
}

DrbgStream::~DrbgStream() {
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_platform_zeroize(pool_.data(), pool_.size());
}

void DrbgStream::refill() {
  if (mbedtls_ctr_drbg_random(&drbg_, pool_.data(), pool_.size()) != 0) {
    throw std::runtime_error("DrbgStream: CTR_DRBG generate failed");
  }
  pool_used_ = 0;
}

void DrbgStream::fill(uint8_t* out, size_t length) {
  while (length > 0) {
    if (pool_used_ == pool_.size()) refill();
    size_t take = pool_.size() - pool_used_;
    if (take > length) take = length;
    std::memcpy(out, pool_.data() + pool_used_, take);
    pool_used_ += take;
    out += take;
    length -= take;
  }
}

uint64_t DrbgStream::next_u64() {
  uint8_t bytes[8];
  if (pool_.size() - pool_used_ >= 8) {
    std::memcpy(bytes, pool_.data() + pool_used_, 8);
    pool_used_ += 8;
  } else {
    fill(bytes, sizeof bytes);
  }
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

namespace {
constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;  // 2^-53, exact
}  // namespace

double DrbgStream::uniform53() { return static_cast<double>(next_u64() >> 11) * kTwoToMinus53; }

bool DrbgStream::bernoulli(double p) {
  if (!(p > 0)) return false;
  if (p >= 1) return true;
  // p < 1 has at most 53 significant bits, so p * 2^64 < 2^64 is exact.
  const auto threshold = static_cast<uint64_t>(std::ldexp(p, 64));
  return next_u64() < threshold;
}

namespace {

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

}  // namespace

double DrbgStream::next_gaussian() { return gaussian_from(next_u64()); }

double DrbgStream::gaussian_from(uint64_t w) {
  const Ziggurat& z = ziggurat();
  for (;; w = next_u64()) {
    // One 64-bit draw: bits 0-7 the layer, bit 8 the sign, bits 11-63 a
    // 53-bit uniform; ~99% of draws stop at the first comparison.
    const auto layer = static_cast<int>(w & 0xFF);
    const double sign = (w >> 8) & 1 ? -1.0 : 1.0;
    const double magnitude = static_cast<double>(w >> 11) * kTwoToMinus53 * z.x[layer];
    if (magnitude < z.x[layer + 1]) return sign * magnitude;
    if (layer == 0) {
      // Tail beyond r (Marsaglia 1964): exponential proposals, accepted
      // with the normal's relative density.
      for (;;) {
        const double a = -std::log(1 - uniform53()) / z.r;
        const double b = -std::log(1 - uniform53());
        if (b + b >= a * a) return sign * (z.r + a);
      }
    }
    // Wedge between the layer's rectangle and the curve.
    const double y = z.f[layer] + uniform53() * (z.f[layer + 1] - z.f[layer]);
    if (y < std::exp(-0.5 * magnitude * magnitude)) return sign * magnitude;
  }
}

template <typename Scalar>
void DrbgStream::add_gaussian(Scalar* out, size_t n, double stddev) {
  // The same draws as n calls of next_gaussian(), with its first
  // comparison inlined here.
  const Ziggurat& z = ziggurat();
  for (size_t k = 0; k < n; ++k) {
    const uint64_t w = next_u64();
    const auto layer = static_cast<int>(w & 0xFF);
    const double magnitude = static_cast<double>(w >> 11) * kTwoToMinus53 * z.x[layer];
    double value;
    if (magnitude < z.x[layer + 1]) {
      value = (w >> 8) & 1 ? -magnitude : magnitude;
    } else {
      value = gaussian_from(w);
    }
    out[k] = static_cast<Scalar>(static_cast<double>(out[k]) + stddev * value);
  }
}

template void DrbgStream::add_gaussian<float>(float*, size_t, double);
template void DrbgStream::add_gaussian<double>(double*, size_t, double);

}  // namespace blur::collector
