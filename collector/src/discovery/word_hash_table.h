// One member table of the discovery hash family (sdk's prefix_hash.h) for
// every seed: the bucket of each character code at each position, under
// the keys of one key level. The hash is linear over GF(2), so a word's
// bucket under a seed is the xor of its characters' (about 28 x positions x
// seeds bytes; 7.3 MB for 16 positions and 2^14 seeds).
#ifndef BLUR_COLLECTOR_DISCOVERY_WORD_HASH_TABLE_H
#define BLUR_COLLECTOR_DISCOVERY_WORD_HASH_TABLE_H

#include <cstdint>
#include <memory>
#include <vector>

#include "blur/discovery/word.h"

namespace blur::collector {

class WordHashTable {
 public:
  // Words of up to `positions` characters, members prefix_hash_key(key_level,
  // s) for s < `seeds`, top `bucket_bits` bits (<= 8).
  WordHashTable(uint32_t key_level, uint32_t positions, uint32_t seeds, uint32_t bucket_bits);

  uint32_t seeds() const { return seeds_; }
  uint32_t bucket_bits() const { return bits_; }
  // The word's bucket under each seed into hashes[0..seeds).
  void hash(const blur::Word& word, uint8_t* hashes) const;
  // The buckets of character `code` at `position` under each seed.
  const uint8_t* row(uint32_t position, uint32_t code) const {
    return table_.data() + (size_t{position} * blur::kWordAlphabet + code) * seeds_;
  }
  // Reports whose bucket is hashes[s] xor extra[s] (extra may be null): the
  // sum over seeds of counts[s << bucket_bits | that bucket].
  uint64_t support(const uint64_t* counts, const uint8_t* hashes, const uint8_t* extra) const;

 private:
  uint32_t seeds_;
  uint32_t bits_;
  std::vector<uint8_t> table_;
};

// The table for these parameters, built once per process and shared by
// every decoder (building one costs a few tens of milliseconds and up to 7
// MB; pem's 15 levels at 16 characters, 62 MB and a few tenths of a
// second). The kSharedTables most recently used are kept.
inline constexpr size_t kSharedTables = 64;
std::shared_ptr<const WordHashTable> shared_word_table(uint32_t key_level, uint32_t positions,
                                                       uint32_t seeds, uint32_t bucket_bits);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_WORD_HASH_TABLE_H
