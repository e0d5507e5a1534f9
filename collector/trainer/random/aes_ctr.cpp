#include "trainer/random/aes_ctr.h"

#include <cstring>
#include <stdexcept>

#include "mbedtls/aes.h"
#include "mbedtls/platform_util.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define BLUR_AES_NI 1
#endif

namespace blur::trainer {

struct AesCtr::Portable {
  mbedtls_aes_context aes;
};

namespace {

void counter_block(const std::array<uint8_t, 8>& prefix, uint64_t index, uint8_t out[16]) {
  std::memcpy(out, prefix.data(), 8);
  for (int k = 0; k < 8; ++k) out[8 + k] = static_cast<uint8_t>(index >> (56 - 8 * k));
}

#ifdef BLUR_AES_NI
#define BLUR_TARGET_AES __attribute__((target("aes,sse4.1")))

// AES-256 key expansion (FIPS-197 §5.2) with AESKEYGENASSIST: the even
// round keys take SubWord(RotWord(w)) ^ rcon of the previous odd key, the
// odd ones SubWord(w) of the previous even key.
BLUR_TARGET_AES inline __m128i mix_prefix_xor(__m128i key) {
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
  return _mm_xor_si128(key, _mm_slli_si128(key, 4));
}
BLUR_TARGET_AES inline __m128i even_key(__m128i two_back, __m128i assist) {
  return _mm_xor_si128(mix_prefix_xor(two_back), _mm_shuffle_epi32(assist, 0xff));
}
BLUR_TARGET_AES inline __m128i odd_key(__m128i two_back, __m128i previous) {
  const __m128i assist = _mm_aeskeygenassist_si128(previous, 0x00);
  return _mm_xor_si128(mix_prefix_xor(two_back), _mm_shuffle_epi32(assist, 0xaa));
}

// Round keys i (even) and i + 1 (odd) from the two before them; the round
// constant is a template argument because AESKEYGENASSIST takes an immediate.
template <int kRcon>
BLUR_TARGET_AES inline void key_pair(__m128i* k, int i) {
  k[i] = even_key(k[i - 2], _mm_aeskeygenassist_si128(k[i - 1], kRcon));
  k[i + 1] = odd_key(k[i - 1], k[i]);
}

BLUR_TARGET_AES void expand_key_ni(const uint8_t key[32], uint8_t out[15 * 16]) {
  __m128i k[15];
  k[0] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key));
  k[1] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(key + 16));
  key_pair<0x01>(k, 2);
  key_pair<0x02>(k, 4);
  key_pair<0x04>(k, 6);
  key_pair<0x08>(k, 8);
  key_pair<0x10>(k, 10);
  key_pair<0x20>(k, 12);
  k[14] = even_key(k[12], _mm_aeskeygenassist_si128(k[13], 0x40));
  for (int r = 0; r < 15; ++r) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * r), k[r]);
}

// One block, for the tail of a request.
BLUR_TARGET_AES inline __m128i encrypt_one(const __m128i* k, __m128i x) {
  x = _mm_xor_si128(x, k[0]);
  for (int r = 1; r < 14; ++r) x = _mm_aesenc_si128(x, k[r]);
  return _mm_aesenclast_si128(x, k[14]);
}

BLUR_TARGET_AES inline __m128i counter_ni(uint64_t prefix_word, uint64_t index) {
  return _mm_set_epi64x(static_cast<long long>(__builtin_bswap64(index)),
                        static_cast<long long>(prefix_word));
}

// Eight independent blocks per round, written out so that they stay in
// registers and keep the AES unit's pipeline full (the round keys are
// memory operands).
BLUR_TARGET_AES void blocks_ni(const uint8_t* round_keys, const std::array<uint8_t, 8>& prefix,
                               uint64_t first, size_t count, uint8_t* out) {
  const auto* k = reinterpret_cast<const __m128i*>(round_keys);
  uint64_t prefix_word;
  std::memcpy(&prefix_word, prefix.data(), 8);
  auto* o = reinterpret_cast<__m128i*>(out);
  size_t done = 0;
  for (; done + 8 <= count; done += 8) {
    const uint64_t i = first + done;
    const __m128i k0 = _mm_load_si128(k);
    __m128i x0 = _mm_xor_si128(counter_ni(prefix_word, i), k0);
    __m128i x1 = _mm_xor_si128(counter_ni(prefix_word, i + 1), k0);
    __m128i x2 = _mm_xor_si128(counter_ni(prefix_word, i + 2), k0);
    __m128i x3 = _mm_xor_si128(counter_ni(prefix_word, i + 3), k0);
    __m128i x4 = _mm_xor_si128(counter_ni(prefix_word, i + 4), k0);
    __m128i x5 = _mm_xor_si128(counter_ni(prefix_word, i + 5), k0);
    __m128i x6 = _mm_xor_si128(counter_ni(prefix_word, i + 6), k0);
    __m128i x7 = _mm_xor_si128(counter_ni(prefix_word, i + 7), k0);
    for (int r = 1; r < 14; ++r) {
      const __m128i kr = _mm_load_si128(k + r);
      x0 = _mm_aesenc_si128(x0, kr);
      x1 = _mm_aesenc_si128(x1, kr);
      x2 = _mm_aesenc_si128(x2, kr);
      x3 = _mm_aesenc_si128(x3, kr);
      x4 = _mm_aesenc_si128(x4, kr);
      x5 = _mm_aesenc_si128(x5, kr);
      x6 = _mm_aesenc_si128(x6, kr);
      x7 = _mm_aesenc_si128(x7, kr);
    }
    const __m128i kl = _mm_load_si128(k + 14);
    _mm_storeu_si128(o + done, _mm_aesenclast_si128(x0, kl));
    _mm_storeu_si128(o + done + 1, _mm_aesenclast_si128(x1, kl));
    _mm_storeu_si128(o + done + 2, _mm_aesenclast_si128(x2, kl));
    _mm_storeu_si128(o + done + 3, _mm_aesenclast_si128(x3, kl));
    _mm_storeu_si128(o + done + 4, _mm_aesenclast_si128(x4, kl));
    _mm_storeu_si128(o + done + 5, _mm_aesenclast_si128(x5, kl));
    _mm_storeu_si128(o + done + 6, _mm_aesenclast_si128(x6, kl));
    _mm_storeu_si128(o + done + 7, _mm_aesenclast_si128(x7, kl));
  }
  for (; done < count; ++done) {
    _mm_storeu_si128(o + done, encrypt_one(k, counter_ni(prefix_word, first + done)));
  }
}
#endif

}  // namespace

AesCtr::AesCtr(const std::array<uint8_t, 32>& key, const std::array<uint8_t, 8>& prefix,
               bool allow_aes_ni)
    : aes_ni_(false), prefix_(prefix) {
#ifdef BLUR_AES_NI
  aes_ni_ = allow_aes_ni && __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.1");
  if (aes_ni_) {
    expand_key_ni(key.data(), round_keys_.data());
    return;
  }
#else
  (void)allow_aes_ni;
#endif
  portable_ = new Portable;
  mbedtls_aes_init(&portable_->aes);
  if (mbedtls_aes_setkey_enc(&portable_->aes, key.data(), 256) != 0) {
    mbedtls_aes_free(&portable_->aes);
    delete portable_;
    throw std::runtime_error("AesCtr: AES-256 key setup failed");
  }
}

AesCtr::~AesCtr() {
  mbedtls_platform_zeroize(round_keys_.data(), round_keys_.size());
  if (portable_ != nullptr) {
    mbedtls_aes_free(&portable_->aes);
    delete portable_;
  }
}

void AesCtr::blocks(uint64_t first, size_t count, uint8_t* out) const {
#ifdef BLUR_AES_NI
  if (aes_ni_) {
    blocks_ni(round_keys_.data(), prefix_, first, count, out);
    return;
  }
#endif
  uint8_t counter[16];
  for (size_t k = 0; k < count; ++k) {
    counter_block(prefix_, first + k, counter);
    if (mbedtls_aes_crypt_ecb(&portable_->aes, MBEDTLS_AES_ENCRYPT, counter, out + 16 * k) != 0) {
      throw std::runtime_error("AesCtr: AES-256 failed");
    }
  }
}

}  // namespace blur::trainer
