#include "trainer/random/discrete_gaussian.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

#include "mbedtls/platform_util.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include "trainer/random/run_in_shares.h"

namespace blur::trainer {

namespace {

constexpr int kBlocksPerChunkLog2 = 24;  // keystream blocks a chunk may read
constexpr size_t kBufferBlocks = 128;

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
  // The next n words, as n calls of word() would give them.
  void fill(uint64_t* out, size_t n) {
    while (n > 0) {
      if (at_ == buffer_.size()) refill();
      const size_t take = std::min<size_t>(n, buffer_.size() - at_);
      std::memcpy(out, buffer_.data() + at_, take * sizeof(uint64_t));
      at_ += static_cast<uint32_t>(take);
      out += take;
      n -= take;
    }
  }
 private:
  // The keystream's bytes as words in the machine's byte order (any fixed
  // order is uniform).
  __attribute__((noinline)) void refill() {
    if (end_block_ - next_block_ < kBufferBlocks) {
      throw std::runtime_error("DiscreteGaussianNoise: a chunk ran past its keystream");
    }
    aes_.blocks(next_block_, kBufferBlocks, reinterpret_cast<uint8_t*>(buffer_.data()));
    next_block_ += kBufferBlocks;
    at_ = 0;
  }

  const AesCtr& aes_;
  uint64_t next_block_, end_block_;
  alignas(64) std::array<uint64_t, kBufferBlocks * 2> buffer_;
  // 32 bits: a store of an int64_t draw cannot alias it, so it can stay in
  // a register across draws.
  uint32_t at_ = kBufferBlocks * 2;
};

using u128 = unsigned __int128;

// --- 128-bit fixed point: values v / 2^127 --------------------------------

constexpr u128 kOne = static_cast<u128>(1) << 127;

// The full 256-bit product, little-endian 64-bit limbs.
struct U256 {
  uint64_t limb[4];
};
U256 multiply(u128 a, u128 b) {
  const auto a0 = static_cast<uint64_t>(a), a1 = static_cast<uint64_t>(a >> 64);
  const auto b0 = static_cast<uint64_t>(b), b1 = static_cast<uint64_t>(b >> 64);
  const u128 p00 = static_cast<u128>(a0) * b0, p01 = static_cast<u128>(a0) * b1;
  const u128 p10 = static_cast<u128>(a1) * b0, p11 = static_cast<u128>(a1) * b1;
  const u128 mid = (p00 >> 64) + static_cast<uint64_t>(p01) + static_cast<uint64_t>(p10);
  const u128 high = (mid >> 64) + (p01 >> 64) + (p10 >> 64) + static_cast<uint64_t>(p11);
  return {{static_cast<uint64_t>(p00), static_cast<uint64_t>(mid), static_cast<uint64_t>(high),
           static_cast<uint64_t>((high >> 64) + (p11 >> 64))}};
}
// floor(r / 2^s) for a result below 2^128.
u128 shift_right(const U256& r, unsigned s) {
  uint64_t out[2] = {0, 0};
  for (unsigned i = 0; i < 2; ++i) {
    const unsigned from = i + s / 64, bits = s % 64;
    const uint64_t low = from < 4 ? r.limb[from] : 0, up = from + 1 < 4 ? r.limb[from + 1] : 0;
    out[i] = bits == 0 ? low : (low >> bits) | (up << (64 - bits));
  }
  return static_cast<u128>(out[1]) << 64 | out[0];
}
// floor(a b / 2^127): one unit of truncation.
u128 mul127(u128 a, u128 b) { return shift_right(multiply(a, b), 127); }

// exp(-f) for f = f127 / 2^127 in [0, 1], by its alternating Taylor series
// until a term is 0. Term i is truncated at most twice per step and carries
// the previous term's error times f/i < 1, so it is off by at most 2i
// units; with at most 40 terms the sum is within 2^12 units.
u128 exp_negative_fraction(u128 f127) {
  u128 term = kOne, positive = kOne, negative = 0;
  for (unsigned i = 1; term != 0; ++i) {
    term = mul127(term, f127) / i;
    (i % 2 ? negative : positive) += term;
  }
  return positive - negative;
}

// exp(-(k + f127 / 2^127)) for k <= 80: e^-1 (within 2^12 units) k times,
// each product adding at most 2^12 + 1 units to the previous error times
// e^-1, then times exp(-f): within k (2^12 + 1) + 2^12 + 1 < 2^20 units.
u128 exp_negative(uint64_t k, u128 f127) {
  static const u128 kInverseE = exp_negative_fraction(kOne);
  u128 power = kOne;
  for (uint64_t i = 0; i < k; ++i) power = mul127(power, kInverseE);
  return mul127(power, exp_negative_fraction(f127));
}

// --- the proposal's tables, one per log2_sigma ------------------------------

constexpr unsigned kBucketBits = 9;  // alias buckets: 512
constexpr size_t kBuckets = size_t{1} << kBucketBits;
// W_0 = 2^20: A = exp(-gamma) 2^20 / W_b. The weights' total is about
// 20.6 * 2^20, so a bucket's capacity C < 2^16 and 24 random bits choose in
// it (rejecting with probability < 2^-8).
constexpr int kWeightBits = 20;

struct Table {
  unsigned width_bits = 0;  // blocks of 2^width_bits integers
  uint64_t blocks = 0;      // body blocks; category `blocks` is the tail, +1 rejects
  std::vector<uint64_t> weight;        // W_b, body blocks
  // Quarter blocks (by the place's leading sub_bits bits): with T = U's
  // leading top_bits bits, T < accept_top[q] implies U < A and
  // T >= reject_top[q] implies U >= A, for quarter q = 4 b + sub.
  unsigned top_bits = 0;
  unsigned sub_bits = 0;
  std::vector<uint32_t> accept_top, reject_top;
  // The same, packed for one load each: bucket k's threshold | alias << 17
  // (C < 2^16), and quarter q's accept_top | reject_top << 32.
  uint32_t bucket_entry[kBuckets] = {};
  std::vector<uint64_t> quarter_entry;
  uint64_t capacity = 0;               // C: each bucket holds C units of weight
  uint64_t threshold[kBuckets] = {};
  uint16_t alias[kBuckets] = {};
};

Table build_table(unsigned j) {
  Table t;
  const unsigned per_sigma_bits = std::min(j, 4u);
  const double per_sigma = std::ldexp(1.0, static_cast<int>(per_sigma_bits));
  t.width_bits = j - per_sigma_bits;
  t.blocks = 16 * (uint64_t{1} << per_sigma_bits);  // up to 16 sigma
  const double scale = std::ldexp(1.0, kWeightBits);
  // (x / sigma)^2 / 2 at the block's edges, where x = b w and w / sigma = 1 / per_sigma.
  auto gamma_at = [&](uint64_t b) { return 0.5 * std::pow(static_cast<double>(b) / per_sigma, 2); };
  std::vector<uint64_t> w(kBuckets, 0);
  for (uint64_t b = 0; b < t.blocks; ++b) {
    // W_b >= 2^20 exp(-gamma(b)), the largest density on the block (exp is
    // within an ulp; the factor covers it). W_0 = 2^20 exactly.
    w[b] = b == 0 ? uint64_t{1} << kWeightBits
                  : static_cast<uint64_t>(
                        std::ceil(std::exp(-gamma_at(b)) * scale * (1 + std::ldexp(1.0, -40))));
    t.weight.push_back(w[b]);
  }
  // On quarter [left, right) of block b: exp(-gamma(right)) 2^20 / W_b <= A
  // <= exp(-gamma(left)) 2^20 / W_b, widened by 2^-40 for the rounding of
  // exp, the division and the product; in units of 2^-top_bits, the lower
  // bound rounded down, the upper one up.
  t.top_bits = 30 - std::min(t.width_bits, 22u);
  t.sub_bits = std::min(t.width_bits, 2u);
  const double quarters = std::ldexp(1.0, static_cast<int>(t.sub_bits));
  const double top = std::ldexp(1.0, static_cast<int>(t.top_bits));
  auto gamma_of = [&](double blocks) { return 0.5 * (blocks / per_sigma) * (blocks / per_sigma); };
  for (uint64_t b = 0; b < t.blocks; ++b) {
    for (unsigned q = 0; q < 4; ++q) {
      const double left = static_cast<double>(b) + q / quarters;
      const double right = q + 1 < quarters ? static_cast<double>(b) + (q + 1) / quarters
                                            : static_cast<double>(b + 1);
      const double ratio = scale / static_cast<double>(w[b]);
      const double low = std::exp(-gamma_of(right)) * ratio * (1 - std::ldexp(1.0, -40));
      const double high = std::exp(-gamma_of(left)) * ratio * (1 + std::ldexp(1.0, -40));
      t.accept_top.push_back(static_cast<uint32_t>(std::floor(low * top)));
      t.reject_top.push_back(static_cast<uint32_t>(std::min(top, std::ceil(high * top))));
    }
  }
  // The tail: weight 1 in all, block blocks + G with probability 2^-(G+1).
  // It dominates: exp(-gamma(blocks + G)) 2^20 <= 2^-(G+1) for all G >= 0,
  // since gamma(blocks) >= 128 and gamma grows by >= G beyond it.
  w[t.blocks] = 1;
  uint64_t sum = 0;
  for (uint64_t v : w) sum += v;
  t.capacity = (sum + kBuckets - 1) / kBuckets;
  if (t.capacity >= (uint64_t{1} << 16)) throw std::logic_error("DiscreteGaussianNoise: table");
  w[t.blocks + 1] = t.capacity * kBuckets - sum;  // padding: a proposal that is rejected
  // Vose's alias method in integers: bucket k keeps threshold[k] units of
  // category k and the rest of its capacity for alias[k].
  std::vector<size_t> small, large;
  for (size_t k = 0; k < kBuckets; ++k) (w[k] < t.capacity ? small : large).push_back(k);
  while (!small.empty() && !large.empty()) {
    const size_t s = small.back(), l = large.back();
    small.pop_back();
    t.threshold[s] = w[s];
    t.alias[s] = static_cast<uint16_t>(l);
    w[l] -= t.capacity - w[s];
    if (w[l] < t.capacity) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (size_t k : small) t.threshold[k] = t.capacity, t.alias[k] = static_cast<uint16_t>(k);
  for (size_t k : large) t.threshold[k] = t.capacity, t.alias[k] = static_cast<uint16_t>(k);
  for (size_t k = 0; k < kBuckets; ++k) {
    t.bucket_entry[k] = static_cast<uint32_t>(t.threshold[k] | uint64_t{t.alias[k]} << 17);
  }
  for (size_t q = 0; q < t.accept_top.size(); ++q) {
    t.quarter_entry.push_back(t.accept_top[q] | uint64_t{t.reject_top[q]} << 32);
  }
  return t;
}

const Table& table(unsigned j) {
  static const std::vector<Table> tables = [] {
    std::vector<Table> all;
    for (unsigned k = 0; k <= DiscreteGaussianNoise::kMaxLog2Sigma; ++k) all.push_back(build_table(k));
    return all;
  }();
  return tables[j];
}

// 2^k exactly, for -1022 <= k <= 1023 (ldexp without its call).
inline double power_of_two(int k) {
  const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
  double value;
  std::memcpy(&value, &bits, 8);
  return value;
}

[[noreturn]] void undecided() {
  throw std::runtime_error("DiscreteGaussianNoise: a comparison within 2^-103 (fails closed)");
}

// U_inf < A = exp(-gamma) 2^20 / W_eff, where U_inf is the uniform whose
// first 64 bits are `u` (more drawn from r when needed), gamma =
// square / 2^e, and W_eff = weight / 2^shift. Equivalently X < exp(-gamma)
// with X = U_inf weight / 2^(20 + shift) < 1.
bool accept(ChunkBits& r, uint64_t u, u128 square, unsigned e, uint64_t weight, unsigned shift,
            bool fast) {
  const auto k = static_cast<uint64_t>(square >> e);
  if (fast) {
    const double gamma = static_cast<double>(square) * power_of_two(-static_cast<int>(e));
    if (gamma > 600) {
      // A < e^-600 2^(20 + 65) < 2^-760: only U_inf < 2^-64 could be below.
      if (u != 0) return false;
    } else {
      // gamma's conversion is within 2^-53 relative, exp within an ulp.
      const double margin = gamma * power_of_two(-50) + power_of_two(-48);
      const double e_value = std::exp(-gamma);
      const double e_low = e_value * (1 - 2 * margin), e_high = e_value * (1 + 2 * margin);
      const double down = power_of_two(-(64 + kWeightBits + static_cast<int>(shift)));
      const double x_low = static_cast<double>(u) * static_cast<double>(weight) * down *
                           (1 - power_of_two(-50));
      const double x_high = (static_cast<double>(u) + 1) * static_cast<double>(weight) * down *
                            (1 + power_of_two(-50));
      if (x_high < e_low) return true;
      if (x_low > e_high) return false;
    }
  }
  // 128 bits of U_inf, X and exp(-gamma) in units of 2^-127.
  const u128 n_u = static_cast<u128>(u) << 64 | r.word();
  // X 2^127 = n_u weight / 2^(21 + shift), in [x, x + 2).
  const u128 x = shift_right(multiply(n_u, weight), kWeightBits + 1 + shift);
  const u128 slack = static_cast<u128>(1) << 24;  // well above the 2^20 error
  if (k > 80) {  // exp(-gamma) < 2^-115: below 2^12 units
    if (x > slack) return false;
    undecided();
  }
  const u128 fraction = (square & ((static_cast<u128>(1) << e) - 1)) << (127 - e);
  const u128 value = exp_negative(k, fraction);
  if (x + 2 + slack < value) return true;
  if (x > value + slack) return false;
  undecided();
}

// The table's scalars and arrays as a local value (so they can stay in
// registers across the draws' stores).
struct Hot {
  uint64_t capacity, blocks;
  unsigned width, inline_width, top_bits, sub_shift;
  const uint64_t* threshold;
  const uint16_t* alias;
  const uint64_t* weight;
  const uint32_t* accept_top;
  const uint32_t* reject_top;
  const uint32_t* bucket_entry;
  const uint64_t* quarter_entry;
};

Hot hot(const Table& t) {
  return Hot{t.capacity,          t.blocks,          t.width_bits,
             std::min(t.width_bits, 22u), t.top_bits,     t.width_bits - t.sub_bits,
             t.threshold,         t.alias,           t.weight.data(),
             t.accept_top.data(), t.reject_top.data(), t.bucket_entry,
             t.quarter_entry.data()};
}

// kFast: the usual comparisons (else only the 128-bit one); kWide: places
// wider than the word's 22 bits (sigma > 2^26).
struct Proposal {
  bool accepted = false;
  int64_t z = 0;
};

// One proposal of N_Z(0, 4^j) from its word, decided fully: a block and a
// place in it, accepted with A. The word holds the bucket (9 bits), the
// sign (1), the alias's 24-bit uniform, the place (its first 22 bits) and
// U's leading bits, enough to decide most proposals; the rest of U and the
// rare branches read further words from `r`.
template <bool kFast, bool kWide>
Proposal decide(uint64_t word, ChunkBits& r, unsigned j, const Hot& t) {
  constexpr bool fast = kFast;
  const unsigned e = 2 * j + 1;  // gamma = z^2 / 2^(2j+1)
  const unsigned width = t.width;
  const unsigned inline_width = t.inline_width;
  const unsigned top_bits = t.top_bits;  // >= 8: U's leading bits in the word
  constexpr uint64_t kLow24 = 0xffffff;
  {
    const auto bucket = static_cast<size_t>(word & (kBuckets - 1));
    const bool negative = (word >> kBucketBits) & 1;
    // Lemire's multiply-and-reject on 24 bits: uniform in [0, C) exactly.
    uint64_t product = ((word >> 10) & kLow24) * t.capacity;
    if ((product & kLow24) < t.capacity) {
      const uint64_t threshold = (uint64_t{1} << 24) % t.capacity;
      while ((product & kLow24) < threshold) product = (r.word() >> 40) * t.capacity;
    }
    const uint64_t u = product >> 24;
    const uint64_t rest = word >> 34;  // 30 bits
    uint64_t place = rest & ((uint64_t{1} << inline_width) - 1);
    const uint64_t u_top = rest >> inline_width;
    if (kWide) place = place << (width - 22) | (r.word() >> (86 - width));
    const uint64_t category = u < t.threshold[bucket] ? bucket : t.alias[bucket];
    uint64_t block = category, weight = 0;
    unsigned shift = 0;
    if (category < t.blocks) {
      weight = t.weight[category];
    } else if (category == t.blocks) {  // the tail: G ~ Geometric(1/2) from trailing zero bits
      const uint64_t bits = r.word();
      if (bits == 0) {  // G >= 64: probability 2^-64 per tail visit (itself ~2^-24)
        throw std::runtime_error("DiscreteGaussianNoise: tail draw beyond its range (fails closed)");
      }
      const auto g = static_cast<uint64_t>(__builtin_ctzll(bits));
      block = t.blocks + g;
      weight = 1;
      shift = static_cast<unsigned>(g + 1);
    } else {
      return {};  // the padding
    }
    const uint64_t magnitude = (block << width) + place;
    if (negative && magnitude == 0) return {};  // 0 has one sign
    const auto z = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    // U < bound holds if U's leading bits are below the bound's.
    const bool body = category < t.blocks;
    if (fast && body) {
      const uint64_t quarter = 4 * category + ((magnitude & ((uint64_t{1} << width) - 1)) >> t.sub_shift);
      if (u_top < t.accept_top[quarter]) return {true, z};
      if (u_top >= t.reject_top[quarter]) return {};
    }
    const uint64_t u_accept = u_top << (64 - top_bits) | (r.word() >> top_bits);
    const u128 square = static_cast<u128>(magnitude) * magnitude;
    return {accept(r, u_accept, square, e, weight, shift, fast), z};
  }
}

template <bool kFast, bool kWide>
int64_t discrete_gaussian(ChunkBits& r, unsigned j, const Hot& t) {
  for (;;) {
    const Proposal p = decide<kFast, kWide>(r.word(), r, j, t);
    if (p.accepted) return p.z;
  }
}

// Branch-free first look at a proposal word (usual mode): 1 accepted with
// *z, 0 rejected, 2 for decide() (the rare cases).
inline uint32_t classify(uint64_t word, const Hot& t, int64_t* z) {
  constexpr uint64_t kLow24 = 0xffffff;
  const uint64_t bucket = word & (kBuckets - 1);
  const uint64_t negative = (word >> kBucketBits) & 1;
  const uint64_t product = ((word >> 10) & kLow24) * t.capacity;
  const uint64_t u = product >> 24;
  const uint32_t entry = t.bucket_entry[bucket];
  const uint64_t category = u < (entry & 0x1ffff) ? bucket : entry >> 17;
  const uint64_t rest = word >> 34;
  const uint64_t place = rest & ((uint64_t{1} << t.inline_width) - 1);
  const uint64_t u_top = rest >> t.inline_width;
  const uint64_t magnitude = (category << t.width) + place;
  const auto m = static_cast<int64_t>(magnitude);
  *z = negative ? -m : m;
  const bool usual = ((product & kLow24) >= t.capacity) & (category < t.blocks) &
                     !(negative & (magnitude == 0));
  const uint64_t quarter = usual ? 4 * category + (place >> t.sub_shift) : 0;
  const uint64_t bounds = t.quarter_entry[quarter];
  const uint32_t yes = u_top < (bounds & 0xffffffffu);
  const uint32_t no = u_top >= (bounds >> 32);
  return usual ? (yes ? 1u : no ? 0u : 2u) : 2u;
}

#if defined(__x86_64__)
#define BLUR_TARGET_AVX2 __attribute__((target("avx2")))

// classify() on 4 words at a time, lane for lane the same arithmetic (the
// two table reads as gathers); n is a multiple of 4. Values below 2^63
// throughout, so the signed 64-bit comparisons are the unsigned ones.
BLUR_TARGET_AVX2 void classify_avx2(const uint64_t* words, size_t n, const Hot& t,
                                    int64_t* values, uint32_t* status) {
  const __m256i capacity = _mm256_set1_epi64x(static_cast<long long>(t.capacity));
  const __m256i blocks = _mm256_set1_epi64x(static_cast<long long>(t.blocks));
  const __m256i low9 = _mm256_set1_epi64x(kBuckets - 1);
  const __m256i low24 = _mm256_set1_epi64x(0xffffff);
  const __m256i low17 = _mm256_set1_epi64x(0x1ffff);
  const __m256i low32 = _mm256_set1_epi64x(0xffffffffLL);
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256i zero = _mm256_setzero_si256();
  const __m256i all = _mm256_set1_epi64x(-1);
  const __m256i place_mask = _mm256_set1_epi64x(static_cast<long long>((uint64_t{1} << t.inline_width) - 1));
  const __m128i inline_width = _mm_cvtsi32_si128(static_cast<int>(t.inline_width));
  const __m128i width = _mm_cvtsi32_si128(static_cast<int>(t.width));
  const __m128i sub_shift = _mm_cvtsi32_si128(static_cast<int>(t.sub_shift));
  const __m256i even_lanes = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);
  const auto* bucket_entry = reinterpret_cast<const int*>(t.bucket_entry);
  const auto* quarter_entry = reinterpret_cast<const long long*>(t.quarter_entry);
  for (size_t i = 0; i < n; i += 4) {
    const __m256i word = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + i));
    const __m256i bucket = _mm256_and_si256(word, low9);
    const __m256i negative = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_srli_epi64(word, 9), one), one);
    const __m256i product = _mm256_mul_epu32(_mm256_and_si256(_mm256_srli_epi64(word, 10), low24), capacity);
    const __m256i u = _mm256_srli_epi64(product, 24);
    const __m256i entry = _mm256_cvtepu32_epi64(_mm256_i64gather_epi32(bucket_entry, bucket, 4));
    const __m256i below = _mm256_cmpgt_epi64(_mm256_and_si256(entry, low17), u);
    const __m256i category = _mm256_blendv_epi8(_mm256_srli_epi64(entry, 17), bucket, below);
    const __m256i rest = _mm256_srli_epi64(word, 34);
    const __m256i place = _mm256_and_si256(rest, place_mask);
    const __m256i u_top = _mm256_srl_epi64(rest, inline_width);
    const __m256i magnitude = _mm256_add_epi64(_mm256_sll_epi64(category, width), place);
    const __m256i z = _mm256_blendv_epi8(magnitude, _mm256_sub_epi64(zero, magnitude), negative);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(values + i), z);
    // usual = (product & low24) >= capacity, category < blocks, not (-0).
    const __m256i short_draw = _mm256_cmpgt_epi64(capacity, _mm256_and_si256(product, low24));
    const __m256i in_body = _mm256_cmpgt_epi64(blocks, category);
    const __m256i minus_zero = _mm256_and_si256(negative, _mm256_cmpeq_epi64(magnitude, zero));
    const __m256i usual = _mm256_andnot_si256(_mm256_or_si256(short_draw, minus_zero), in_body);
    const __m256i quarter = _mm256_and_si256(
        usual, _mm256_add_epi64(_mm256_slli_epi64(category, 2), _mm256_srl_epi64(place, sub_shift)));
    const __m256i bounds = _mm256_i64gather_epi64(quarter_entry, quarter, 8);
    const __m256i yes = _mm256_cmpgt_epi64(_mm256_and_si256(bounds, low32), u_top);
    const __m256i not_no = _mm256_cmpgt_epi64(_mm256_srli_epi64(bounds, 32), u_top);
    // status: 2, minus 1 if usual and yes, minus 2 if usual, not yes and no.
    const __m256i accepted = _mm256_and_si256(usual, yes);
    const __m256i rejected = _mm256_andnot_si256(_mm256_or_si256(yes, not_no), _mm256_and_si256(usual, all));
    const __m256i code = _mm256_sub_epi64(
        _mm256_sub_epi64(_mm256_set1_epi64x(2), _mm256_and_si256(accepted, one)),
        _mm256_and_si256(rejected, _mm256_set1_epi64x(2)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(status + i),
                     _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(code, even_lanes)));
  }
}
#endif

template <bool kFast, bool kWide>
void draw_range(ChunkBits& r, unsigned j, const Hot t, int64_t* out, size_t n, bool avx2) {
  if (!kFast || kWide) {
    for (size_t k = 0; k < n; ++k) out[k] = discrete_gaussian<kFast, kWide>(r, j, t);
    return;
  }
  // Usual mode: 128 proposal words at a time, classified without branches,
  // then settled in order (the rare ones by decide(), reading more words).
  constexpr size_t kBatch = 128;
  uint64_t words[kBatch];
  int64_t values[kBatch];
  uint32_t status[kBatch];
  size_t k = 0;
  while (k < n) {
    r.fill(words, kBatch);
#if defined(__x86_64__)
    if (avx2) {
      classify_avx2(words, kBatch, t, values, status);
    } else {
      for (size_t i = 0; i < kBatch; ++i) status[i] = classify(words[i], t, &values[i]);
    }
#else
    (void)avx2;
    for (size_t i = 0; i < kBatch; ++i) status[i] = classify(words[i], t, &values[i]);
#endif
    for (size_t i = 0; i < kBatch && k < n; ++i) {
      if (status[i] == 1) {
        out[k++] = values[i];
      } else if (status[i] == 2) {
        const Proposal p = decide<true, false>(words[i], r, j, t);
        if (p.accepted) out[k++] = p.z;
      }
    }
  }
}

}  // namespace

DiscreteGaussianNoise::DiscreteGaussianNoise(const TrainSeed& seed, std::string_view label,
                                             uint64_t index, bool allow_simd,
                                             Comparison comparison)
    : comparison_(comparison) {
#if defined(__x86_64__)
  avx2_ = allow_simd && __builtin_cpu_supports("avx2");
#endif
  DrbgStream stream(seed, label, index);
  std::array<uint8_t, 32> key{};
  std::array<uint8_t, 8> prefix{};
  stream.fill(key.data(), key.size());
  stream.fill(prefix.data(), prefix.size());
  aes_ = std::make_unique<AesCtr>(key, prefix, allow_simd);
  mbedtls_platform_zeroize(key.data(), key.size());
}

void DiscreteGaussianNoise::sample_chunks(int64_t* out, size_t n, unsigned j, size_t first_chunk,
                                          size_t last_chunk) const {
  for (size_t c = first_chunk; c < last_chunk; ++c) {
    const size_t first = c * kChunk;
    draw_chunk(c, out + first, std::min(n, first + kChunk) - first, j);
  }
}

void DiscreteGaussianNoise::draw_chunk(size_t c, int64_t* out, size_t count, unsigned j) const {
  const Hot t = hot(table(j));
  const bool fast = comparison_ == Comparison::kFast;
  const bool wide = t.width > 22;
  ChunkBits bits(*aes_, c);
  if (fast && !wide) {
    draw_range<true, false>(bits, j, t, out, count, avx2_);
  } else if (fast) {
    draw_range<true, true>(bits, j, t, out, count, false);
  } else if (!wide) {
    draw_range<false, false>(bits, j, t, out, count, false);
  } else {
    draw_range<false, true>(bits, j, t, out, count, false);
  }
}

void DiscreteGaussianNoise::sample_range(int64_t* out, size_t first, size_t count,
                                         unsigned log2_sigma) const {
  if (log2_sigma > kMaxLog2Sigma || first % kChunk != 0) {
    throw std::invalid_argument("DiscreteGaussianNoise: sigma above 2^30 or a range off a chunk");
  }
  for (size_t done = 0; done < count; done += kChunk) {
    draw_chunk((first + done) / kChunk, out + done, std::min(kChunk, count - done), log2_sigma);
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
  run_in_shares(chunks, threads, [&](size_t first_chunk, size_t last_chunk) {
    sample_chunks(out, n, log2_sigma, first_chunk, last_chunk);
  });
}

}  // namespace blur::trainer
