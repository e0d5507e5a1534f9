// Prefix extension (PEM; Wang, Li, Jha, "Locally Differentially Private
// Heavy Hitter Identification", IEEE TDSC 2019) over words (word.h): each
// report is one drawn level l of the word's prefix tree, the
// prefix of the word's first l + 2 characters (the whole word if shorter,
// padded with end codes), locally hashed (prefix_hash.h) into 2^g buckets
// and the bucket sent through g-ary randomized response at the full
// epsilon. The collector grows candidates a character at a time, estimating
// level l's prefixes from level l's reports only, and a finished word from
// every level whose prefix length exceeds it (collector/src/discovery/).
//
// The domain size is the longest word accepted, 2..kMaxWordLength: levels
// 0..domain_size - 2, prefix lengths 2..domain_size. The last level (the
// whole word) is drawn with probability 1/2 and each other level with
// 1 / (2 (levels - 1)): the last level's reports estimate every word, so
// they are the final ranking's main data, while the others only have to
// keep the true prefixes in the collector's beam (PEM draws levels
// uniformly; at n = 10^6 this raises the top-10 F1 of BENCHMARKS.md's
// configuration, docs/discovery.md). g is OLH's
// round(log2(e^eps + 1)), at most kMaxBucketBits (the collector's table is
// levels x seeds x 2^g counts).
//
// Payload: local_hash with a = the level, b = the hash seed (seed field:
// level << 16 | seed), bucket = the randomized bucket. The level and the
// seed are drawn independently of the word, so the report's privacy is the
// randomized response's: exactly epsilon_micros, and that is the charge.
#ifndef BLUR_DISCOVERY_PREFIX_EXTENSION_H
#define BLUR_DISCOVERY_PREFIX_EXTENSION_H

#include "blur/discovery/prefix_hash.h"
#include "blur/discovery/word.h"
#include "blur/mechanisms/domain_mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/sampling/exact_sampling.h"

namespace blur {

class PrefixExtension : public DomainMechanism<PrefixExtension, MechanismId::kPrefixExtension> {
 public:
  using Value = Word;
  static constexpr uint32_t kFirstPrefixLength = 2;
  static constexpr uint32_t kMaxBucketBits = 6;
  static_assert(kMaxDomainSize == kMaxWordLength, "the table's limit is the longest word");

  static constexpr uint32_t levels(uint32_t domain_size) {
    return domain_size - kFirstPrefixLength + 1;
  }
  static constexpr uint32_t prefix_length(uint32_t level) { return level + kFirstPrefixLength; }
  static constexpr uint32_t bucket_bits(EpsilonMicros epsilon_micros) {
    const uint32_t bits = LocalHashing::optimized_bucket_bits(epsilon_micros);
    return bits < kMaxBucketBits ? bits : kMaxBucketBits;
  }
  uint32_t levels() const { return levels(domain_size_); }
  uint32_t bucket_bits() const { return bucket_bits(epsilon_micros_); }

  // *seed = level << 16 | hash seed; *bucket in [0, 2^g). kInvalidArgument
  // for a word longer than the domain size.
  template <typename Random>
  Status randomize(Random& random, const Word& word, uint32_t* seed, uint32_t* bucket) const {
    if (word.length == 0 || word.length > domain_size_) return Status::kInvalidArgument;
    // u < levels - 1: that level; the other half of the draws: the last.
    const uint64_t others = levels() - 1;
    uint64_t level = 0, hash_seed = 0;
    if (others != 0) {
      BLUR_TRY(random.uniform(2 * others, &level));
      if (level >= others) level = others;
    }
    BLUR_TRY(random.uniform(kPrefixHashSeeds, &hash_seed));
    const uint32_t bits = bucket_bits();
    const Word prefix = word.prefix(prefix_length(static_cast<uint32_t>(level)));
    const uint32_t hashed =
        prefix_hash(prefix_hash_key(static_cast<uint32_t>(level), static_cast<uint32_t>(hash_seed)),
                    prefix, bits);
    BLUR_TRY(sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat, 1u << bits,
                                        hashed, bucket));
    *seed = static_cast<uint32_t>(level << 16 | hash_seed);
    return Status::kOk;
  }

 private:
  friend class DomainMechanism<PrefixExtension, MechanismId::kPrefixExtension>;
  using DomainMechanism::DomainMechanism;
};

template <>
struct MechanismBuilder<MechanismId::kPrefixExtension> : DomainBuilder<PrefixExtension> {};

}  // namespace blur

#endif  // BLUR_DISCOVERY_PREFIX_EXTENSION_H
