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

namespace blur::trainer {

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

double DrbgStream::uniform53() { return static_cast<double>(next_u64() >> 11) * kTwoToMinus53; }

bool DrbgStream::bernoulli(double p) {
  if (!(p > 0)) return false;
  if (p >= 1) return true;
  // p < 1 has at most 53 significant bits, so p * 2^64 < 2^64 is exact.
  const auto threshold = static_cast<uint64_t>(std::ldexp(p, 64));
  return next_u64() < threshold;
}

}  // namespace blur::trainer
