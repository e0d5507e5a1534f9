// The sequence fragment puzzle (SFP; Apple's Differential Privacy Team,
// "Learning with Privacy at Scale", 2017) over words (word.h). One report
// carries two sketches of the word, each at half the epsilon:
//
// - the word sketch: the whole word, locally hashed (prefix_hash.h, key
//   level 0) into 2^g buckets and sent through g-ary randomized response;
// - the fragment sketch: one drawn position i of the word's
//   ceil(L / 2) two-character fragments (characters 2i and 2i + 1, the end
//   code past the word's end), tagged with the word's puzzle piece (an
//   8-bit public hash of the whole word), locally hashed (key level 1 + i)
//   and randomized the same way.
//
// The collector finds frequent (piece, fragment) pairs per position, joins
// the fragments that share a piece into candidate words, and ranks the
// candidates with the word sketch (collector/src/discovery/). Apple used
// Hadamard count-mean sketches; both sketches here are optimized local
// hashing over a fixed public table of seeds, as PEM's (prefix_extension.h),
// which has lower variance at the same epsilon and lets the collector
// aggregate reports by (seed, bucket).
//
// Privacy: the position, the seeds and the piece's key are drawn or fixed
// independently of the word; each randomized response is exactly epsilon/2
// (the exact sampler at the rational epsilon_micros / (2 * 10^6)), so the
// report realizes exactly epsilon_micros by basic composition, the charge.
//
// The domain size is the longest word L, 2..kMaxWordLength. g is OLH's
// round(log2(e^{eps/2} + 1)), at most kMaxBucketBits.
//
// Payload: FragmentPuzzleFields below, on the wire blur.proto's
// FragmentPuzzlePayload; inside the device (ReportPayload) and the
// collector (IncomingReport) packed as a local hash: a = position << 10 |
// fragment seed, b = word seed, bucket = fragment bucket << 8 | word bucket
// (ReportPayload's seed: a << 16 | b), the wire form of earlier SDKs.
#ifndef BLUR_DISCOVERY_FRAGMENT_PUZZLE_H
#define BLUR_DISCOVERY_FRAGMENT_PUZZLE_H

#include "blur/discovery/prefix_hash.h"
#include "blur/discovery/word.h"
#include "blur/mechanisms/domain_mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/sampling/exact_sampling.h"

namespace blur {

inline constexpr uint32_t kFragmentHashSeedBits = 10;
inline constexpr uint32_t kFragmentHashSeeds = 1u << kFragmentHashSeedBits;
inline constexpr uint32_t kPuzzlePieceBits = 8;
inline constexpr uint32_t kPuzzlePieces = 1u << kPuzzlePieceBits;
inline constexpr uint32_t kFragmentCharacters = 2;

// A word's puzzle piece: the top 8 bits of the family's member for seed 0
// of a level no sketch uses. Public and fixed, so pieces are comparable
// across devices; two words share one with probability about 1/256.
inline constexpr uint32_t kPuzzlePieceKeyLevel = 0xFFFFu;
constexpr uint32_t puzzle_piece(const Word& word) {
  return static_cast<uint32_t>(prefix_hash_value(prefix_hash_key(kPuzzlePieceKeyLevel, 0), word) >>
                               (64 - kPuzzlePieceBits));
}

// The hashed value of a fragment: piece | code(2i) << 8 | code(2i + 1) << 13.
constexpr uint64_t fragment_value(uint32_t piece, uint32_t first_code, uint32_t second_code) {
  return uint64_t{piece} | uint64_t{first_code} << kPuzzlePieceBits |
         uint64_t{second_code} << (kPuzzlePieceBits + kWordBitsPerCharacter);
}
inline constexpr uint32_t kFragmentValueBits = kPuzzlePieceBits + 2 * kWordBitsPerCharacter;

// The bucket of a fragment value under position `position`'s member `seed`
// (linear over GF(2) in the value's bits, as prefix_hash is).
constexpr uint32_t fragment_hash(uint32_t position, uint32_t seed, uint64_t value,
                                 uint32_t bucket_bits) {
  return static_cast<uint32_t>(gf64_multiply(prefix_hash_key(1 + position, seed).a, value) >>
                               (64 - bucket_bits));
}

// One SFP report's fields, and the one definition of their packing into a
// local-hash payload (a, b, bucket; see above).
struct FragmentPuzzleFields {
  uint32_t position;
  uint32_t fragment_seed;    // < kFragmentHashSeeds
  uint32_t fragment_bucket;  // < 2^kMaxBucketBits
  uint32_t word_seed;        // < kPrefixHashSeeds
  uint32_t word_bucket;      // < 2^kMaxBucketBits

  static constexpr uint32_t kBucketShift = 8;
  // Whether every field fits its packed width (so packing loses nothing).
  constexpr bool packable() const {
    return position < (1u << (16 - kFragmentHashSeedBits)) && fragment_seed < kFragmentHashSeeds &&
           word_seed <= 0xFFFFu && fragment_bucket < (1u << kBucketShift) &&
           word_bucket < (1u << kBucketShift);
  }
  constexpr uint32_t local_hash_a() const { return position << kFragmentHashSeedBits | fragment_seed; }
  constexpr uint32_t local_hash_b() const { return word_seed; }
  constexpr uint32_t local_hash_bucket() const {
    return fragment_bucket << kBucketShift | word_bucket;
  }
  static constexpr FragmentPuzzleFields from_local_hash(uint32_t a, uint32_t b, uint32_t bucket) {
    return FragmentPuzzleFields{a >> kFragmentHashSeedBits, a & (kFragmentHashSeeds - 1),
                                bucket >> kBucketShift, b, bucket & ((1u << kBucketShift) - 1)};
  }
};

class SequenceFragmentPuzzle
    : public DomainMechanism<SequenceFragmentPuzzle, MechanismId::kSequenceFragmentPuzzle> {
 public:
  using Value = Word;
  static constexpr uint32_t kMaxBucketBits = 6;
  static constexpr uint32_t kWordKeyLevel = 0;
  static_assert(kMaxDomainSize == kMaxWordLength, "the table's limit is the longest word");
  static_assert(kMaxBucketBits <= FragmentPuzzleFields::kBucketShift, "buckets fit their packing");
  static_assert((kMaxWordLength + 1) / 2 << kFragmentHashSeedBits < (1u << 16),
                "position and fragment seed share the payload's 16-bit a");

  static constexpr uint32_t positions(uint32_t domain_size) { return (domain_size + 1) / 2; }
  // Each half's g: the word sketch's and the fragment sketch's are equal.
  static constexpr uint32_t bucket_bits(EpsilonMicros epsilon_micros) {
    const uint32_t bits = LocalHashing::optimized_bucket_bits(epsilon_micros / 2);
    return bits < kMaxBucketBits ? bits : kMaxBucketBits;
  }
  uint32_t positions() const { return positions(domain_size_); }
  uint32_t bucket_bits() const { return bucket_bits(epsilon_micros_); }

  // The fields packed (FragmentPuzzleFields): *seed = local_hash_a() << 16
  // | local_hash_b(), *bucket = local_hash_bucket(). kInvalidArgument for a
  // word longer than the domain size.
  template <typename Random>
  Status randomize(Random& random, const Word& word, uint32_t* seed, uint32_t* bucket) const {
    if (word.length == 0 || word.length > domain_size_) return Status::kInvalidArgument;
    const uint32_t bits = bucket_bits();
    const uint64_t half_denominator = 2 * kEpsilonMicrosPerNat;
    uint64_t word_seed = 0, position = 0, fragment_seed = 0;
    uint32_t word_bucket = 0, fragment_bucket = 0;
    BLUR_TRY(random.uniform(kPrefixHashSeeds, &word_seed));
    const uint32_t word_hash =
        prefix_hash(prefix_hash_key(kWordKeyLevel, static_cast<uint32_t>(word_seed)), word, bits);
    BLUR_TRY(sample_randomized_response(random, epsilon_micros_, half_denominator, 1u << bits,
                                        word_hash, &word_bucket));
    BLUR_TRY(random.uniform(positions(), &position));
    BLUR_TRY(random.uniform(kFragmentHashSeeds, &fragment_seed));
    const uint32_t i = static_cast<uint32_t>(position);
    const uint64_t value = fragment_value(puzzle_piece(word), word.code(kFragmentCharacters * i),
                                          word.code(kFragmentCharacters * i + 1));
    const uint32_t fragment = fragment_hash(i, static_cast<uint32_t>(fragment_seed), value, bits);
    BLUR_TRY(sample_randomized_response(random, epsilon_micros_, half_denominator, 1u << bits,
                                        fragment, &fragment_bucket));
    const FragmentPuzzleFields fields{i, static_cast<uint32_t>(fragment_seed), fragment_bucket,
                                      static_cast<uint32_t>(word_seed), word_bucket};
    *seed = fields.local_hash_a() << 16 | fields.local_hash_b();
    *bucket = fields.local_hash_bucket();
    return Status::kOk;
  }

 private:
  friend class DomainMechanism<SequenceFragmentPuzzle, MechanismId::kSequenceFragmentPuzzle>;
  using DomainMechanism::DomainMechanism;
};

template <>
struct MechanismBuilder<MechanismId::kSequenceFragmentPuzzle>
    : DomainBuilder<SequenceFragmentPuzzle> {};

}  // namespace blur

#endif  // BLUR_DISCOVERY_FRAGMENT_PUZZLE_H
