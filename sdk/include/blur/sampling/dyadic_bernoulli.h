// Bit-flip randomization with a dyadic probability q = m / 2^64, 64 coins
// per 64-bit word, and the choice of m that realizes a given privacy loss.
//
// Why dyadic: a unary report of 4096 bits needs 4096 independent coins. The
// exact exp-coins of exact_sampling.h cost a few hundred nanoseconds each;
// a coin of probability m / 2^64 is exactly [U < m / 2^64] for a uniform
// U in [0, 1), decided by comparing U's bits with m's from the top. Done
// bit-sliced (one random word serves 64 coins at the same bit position), a
// word of 64 coins costs about 7 random words on average and at most 64.
//
// Privacy: flipping each bit with probability q gives a per-bit likelihood
// ratio (1 - q) / q. flip_numerator(x) returns the smallest m with
// (2^64 - m) / m <= e^x, computed with integers only from a rigorous lower
// bound L <= e^x (Taylor terms rounded down, products rounded down), so
// the realized ln((1 - q) / q) is at most x, and below it by less than
// 1e-9 nats for x <= 20 (m >= 2^64 / (1 + e^20) > 3.7e10 and L is good to
// about 2^-58 relative). A mechanism that charges x (or a multiple of it)
// in micro-nats therefore charges its realized loss rounded up.
#ifndef BLUR_DYADIC_BERNOULLI_H
#define BLUR_DYADIC_BERNOULLI_H

#include <stddef.h>
#include <stdint.h>

#include "blur/status.h"

namespace blur {

namespace dyadic_detail {

struct U128 {
  uint64_t high;
  uint64_t low;
};

// a * b in 128 bits from 32-bit limbs: 32-bit Arm has no __int128.
inline constexpr U128 multiply(uint64_t a, uint64_t b) {
  const uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32;
  const uint64_t b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  const uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const uint64_t middle = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  return U128{p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32),
              (middle << 32) | (p00 & 0xFFFFFFFFu)};
}

inline constexpr bool at_least(U128 a, U128 b) {
  return a.high != b.high ? a.high > b.high : a.low >= b.low;
}

// A positive number mantissa * 2^exponent with mantissa >= 2^63; every
// operation rounds down, so a value built from lower bounds is one.
struct LowerBound {
  uint64_t mantissa;
  int32_t exponent;
};

inline constexpr LowerBound times(LowerBound a, LowerBound b) {
  const U128 p = multiply(a.mantissa, b.mantissa);
  if (p.high >> 63) return LowerBound{p.high, a.exponent + b.exponent + 64};
  return LowerBound{(p.high << 1) | (p.low >> 63), a.exponent + b.exponent + 63};
}

// Lower bound of e^(numerator / denominator) for numerator <= denominator
// < 2^32, from the Taylor series in fixed point with 62 fraction bits
// (every term and product rounded down; truncating the positive series
// only lowers it further).
inline constexpr LowerBound exp_of_fraction(uint64_t numerator, uint64_t denominator) {
  constexpr uint64_t kOne = uint64_t{1} << 62;
  // f = floor(numerator * 2^62 / denominator), in two steps of 32 and 30 bits.
  const uint64_t head = (numerator << 32) / denominator;
  const uint64_t rest = (numerator << 32) % denominator;
  const uint64_t f = (head << 30) + (rest << 30) / denominator;
  uint64_t sum = kOne;
  uint64_t term = kOne;
  for (uint64_t j = 1; j < 64; ++j) {
    const U128 p = multiply(term, f);  // term, f <= 2^62: p / 2^62 <= 2^62
    term = ((p.high << 2) | (p.low >> 62)) / j;
    if (term == 0) break;
    sum += term;  // < e * 2^62 < 2^64
  }
  if (sum >> 63) return LowerBound{sum, -62};
  return LowerBound{sum << 1, -63};
}

// m * L >= 2^64 - m, exactly (L's exponent is in [-63, -34] for
// 1 <= L < e^21).
inline constexpr bool ratio_within(uint64_t m, LowerBound bound) {
  const U128 product = multiply(m, bound.mantissa);
  const uint64_t target = 0 - m;  // 2^64 - m, as m >= 1
  const int32_t shift = -bound.exponent;
  return at_least(product, U128{target >> (64 - shift), target << shift});
}

}  // namespace dyadic_detail

// The largest argument flip_numerator accepts: x <= 21 nats.
inline constexpr uint64_t kMaxFlipLogRatioNats = 21;

// The smallest m in [1, 2^63] with (2^64 - m) / m <= e^x for
// x = x_numerator / x_denominator, 0 <= x <= 21, x_denominator < 2^32.
// Returns 0 for arguments outside that range.
inline constexpr uint64_t flip_numerator(uint64_t x_numerator, uint64_t x_denominator) {
  using namespace dyadic_detail;
  if (x_denominator == 0 || x_denominator >> 32 ||
      x_numerator / x_denominator > kMaxFlipLogRatioNats) {
    return 0;
  }
  const uint64_t whole = x_numerator / x_denominator;
  LowerBound bound = exp_of_fraction(x_numerator % x_denominator, x_denominator);
  const LowerBound e = exp_of_fraction(1, 1);
  for (uint64_t i = 0; i < whole; ++i) bound = times(bound, e);
  uint64_t low = 1, high = uint64_t{1} << 63;  // ratio_within(2^63, L) holds: L >= 1
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (ratio_within(middle, bound)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

// XORs each of the first `bit_count` bits of `bits` (bit i is
// bits[i / 8] >> (i % 8) & 1) with an independent Bernoulli(m / 2^64) coin;
// bits past bit_count in the last byte are left as they are.
//
// Random: fill(uint8_t*, size_t) -> Status. Words are read little-endian,
// so a seed gives the same output on every target. The number of random
// words drawn depends only on the random words, never on `bits`.
template <typename Random>
Status flip_bits(Random& random, uint64_t m, uint8_t* bits, size_t bit_count) {
  constexpr size_t kBufferWords = 32;
  uint8_t buffer[kBufferWords * 8];
  size_t next_word = 0, buffered_words = 0;
  for (size_t first = 0; first < bit_count; first += 64) {
    // 64 coins at once: lane l is decided at the first bit position where
    // its random bit differs from m's (U < q iff U has a 0 where m has a 1).
    uint64_t undecided = ~uint64_t{0};
    uint64_t ones = 0;
    for (int position = 63; position >= 0 && undecided != 0; --position) {
      if (next_word == buffered_words) {
        // About 8 words per group of 64 coins are used: draw no more than
        // the remaining groups are likely to need (DRBG output is the cost).
        const size_t groups_left = (bit_count - first + 63) / 64;
        buffered_words = groups_left < kBufferWords / 8 ? 8 * groups_left : kBufferWords;
        BLUR_TRY(random.fill(buffer, 8 * buffered_words));
        next_word = 0;
      }
      uint64_t word = 0;
      for (int byte = 7; byte >= 0; --byte) word = word << 8 | buffer[next_word * 8 + byte];
      ++next_word;
      if ((m >> position) & 1u) {
        ones |= undecided & ~word;
        undecided &= word;
      } else {
        undecided &= ~word;
      }
    }
    // Lanes still undecided drew U's top 64 bits equal to m: U >= q, a 0.
    const size_t count = bit_count - first < 64 ? bit_count - first : 64;
    for (size_t i = 0; i < count; i += 8) {
      uint8_t flips = static_cast<uint8_t>(ones >> i);
      if (count - i < 8) flips &= static_cast<uint8_t>((1u << (count - i)) - 1);
      bits[(first + i) / 8] ^= flips;
    }
  }
  return Status::kOk;
}

}  // namespace blur

#endif  // BLUR_DYADIC_BERNOULLI_H
