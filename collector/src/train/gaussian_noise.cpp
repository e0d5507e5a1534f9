#include "train/gaussian_noise.h"

#include <sys/random.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "mbedtls/platform_util.h"
#include "mbedtls/sha256.h"

namespace blur::collector {

namespace {
constexpr char kPersonalization[] = "blur collector gaussian noise v1";
constexpr char kSeedLabel[] = "blur-gaussian-noise-seed";
constexpr double kTwoPi = 6.283185307179586476925286766559;
}  // namespace

GaussianNoise::GaussianNoise()
    : deterministic_(false),
      seed_(0),
      entropy_calls_(0),
      buffer_(),
      buffer_used_(kBufferSize),
      has_spare_(false),
      spare_(0) {
  seed_drbg();
}

GaussianNoise::GaussianNoise(uint64_t seed)
    : deterministic_(true),
      seed_(seed),
      entropy_calls_(0),
      buffer_(),
      buffer_used_(kBufferSize),
      has_spare_(false),
      spare_(0) {
  seed_drbg();
}

GaussianNoise::~GaussianNoise() {
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_platform_zeroize(buffer_, sizeof buffer_);
}

void GaussianNoise::seed_drbg() {
  mbedtls_ctr_drbg_init(&drbg_);
  if (mbedtls_ctr_drbg_seed(&drbg_, &GaussianNoise::entropy, this,
                            reinterpret_cast<const unsigned char*>(kPersonalization),
                            sizeof kPersonalization - 1) != 0) {
    mbedtls_ctr_drbg_free(&drbg_);
    throw std::runtime_error("gaussian noise: seeding CTR_DRBG failed");
  }
}

int GaussianNoise::entropy(void* context, unsigned char* out, size_t length) {
  auto* self = static_cast<GaussianNoise*>(context);
  if (!self->deterministic_) {
    while (length > 0) {
      const ssize_t n = getrandom(out, length, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
      }
      out += n;
      length -= static_cast<size_t>(n);
    }
    return 0;
  }
  // Deterministic entropy: SHA-256(label || seed || call || block), LE.
  const uint64_t call = self->entropy_calls_++;
  for (uint64_t block = 0; length > 0; ++block) {
    unsigned char message[sizeof kSeedLabel - 1 + 24];
    std::memcpy(message, kSeedLabel, sizeof kSeedLabel - 1);
    const uint64_t fields[3] = {self->seed_, call, block};
    for (int f = 0; f < 3; ++f) {
      for (int b = 0; b < 8; ++b) {
        message[sizeof kSeedLabel - 1 + 8 * f + b] =
            static_cast<unsigned char>(fields[f] >> (8 * b));
      }
    }
    unsigned char digest[32];
    mbedtls_sha256_ret(message, sizeof message, digest, 0);
    const size_t take = length < sizeof digest ? length : sizeof digest;
    std::memcpy(out, digest, take);
    out += take;
    length -= take;
  }
  return 0;
}

uint64_t GaussianNoise::next_u64() {
  if (buffer_used_ + 8 > kBufferSize) {
    if (mbedtls_ctr_drbg_random(&drbg_, buffer_, kBufferSize) != 0) {
      throw std::runtime_error("gaussian noise: CTR_DRBG failed (reseed)");
    }
    buffer_used_ = 0;
  }
  uint64_t value = 0;
  for (int b = 7; b >= 0; --b) value = value << 8 | buffer_[buffer_used_ + static_cast<size_t>(b)];
  mbedtls_platform_zeroize(buffer_ + buffer_used_, 8);
  buffer_used_ += 8;
  return value;
}

double GaussianNoise::uniform() { return std::ldexp(static_cast<double>(next_u64() >> 11), -53); }

double GaussianNoise::standard_normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = std::ldexp(static_cast<double>((next_u64() >> 11) + 1), -53);  // (0, 1]
  const double u2 = uniform();                                                     // [0, 1)
  const double radius = std::sqrt(-2.0 * std::log(u1));
  spare_ = radius * std::sin(kTwoPi * u2);
  has_spare_ = true;
  return radius * std::cos(kTwoPi * u2);
}

}  // namespace blur::collector
