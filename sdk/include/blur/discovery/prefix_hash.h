// The hash family of prefix extension (prefix_extension.h): a fixed table of
// kPrefixHashSeeds members per prefix level of the pairwise-independent
// family
//
//   h_{A,B}(w) = top g bits of (A * low(w) + B * high(w))   in GF(2^64)
//
// (w's packing in word.h; + is xor). For words w != w' and (A, B) uniform,
// A * (low xor low') + B * (high xor high') is uniform, so P(h(w) = h(w')) =
// 2^-g exactly. Seed s names the member A = splitmix64(2s), B =
// splitmix64(2s + 1) (Steele, Lea, Flood 2014), s = level * kPrefixHashSeeds + the
// report's seed: a small public table, so
// the collector aggregates reports by (seed, bucket) and evaluates each
// candidate once per seed, never once per report. Over the fixed table a
// pair's collision rate is 2^-g within O(sqrt(2^-g / seeds)), independently
// per level (docs/math.md §3.11); the device's randomized response is what
// makes a report private, not the hash.
//
// h is linear over GF(2) in w's bits: h(w xor w') = h(w) xor h(w'), which
// the collector uses to hash a prefix's children from per-character tables.
#ifndef BLUR_DISCOVERY_PREFIX_HASH_H
#define BLUR_DISCOVERY_PREFIX_HASH_H

#include <stdint.h>

#include "blur/discovery/word.h"

namespace blur {

inline constexpr uint32_t kPrefixHashSeedBits = 14;
inline constexpr uint32_t kPrefixHashSeeds = 1u << kPrefixHashSeedBits;

// a * x in GF(2^64) modulo x^64 + x^4 + x^3 + x + 1.
constexpr uint64_t gf64_times_x(uint64_t a) {
  return (a << 1) ^ ((a >> 63) != 0 ? uint64_t{0x1B} : uint64_t{0});
}

// a * b in GF(2^64), bit by bit.
constexpr uint64_t gf64_multiply(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    if ((b >> i) & 1u) product ^= a;
    a = gf64_times_x(a);
  }
  return product;
}

constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct PrefixHashKey {
  uint64_t a;
  uint64_t b;
};

// The member for a report of `level` with hash seed `seed` < kPrefixHashSeeds.
constexpr PrefixHashKey prefix_hash_key(uint32_t level, uint32_t seed) {
  const uint64_t s = uint64_t{level} * kPrefixHashSeeds + seed;
  return PrefixHashKey{splitmix64(2 * s), splitmix64(2 * s + 1)};
}

// The full 64-bit value; the bucket is its top bucket_bits bits.
constexpr uint64_t prefix_hash_value(PrefixHashKey key, const Word& word) {
  return gf64_multiply(key.a, word.low) ^ gf64_multiply(key.b, word.high);
}

// bucket_bits in 1..8.
constexpr uint32_t prefix_hash(PrefixHashKey key, const Word& word, uint32_t bucket_bits) {
  return static_cast<uint32_t>(prefix_hash_value(key, word) >> (64 - bucket_bits));
}

}  // namespace blur

#endif  // BLUR_DISCOVERY_PREFIX_HASH_H
