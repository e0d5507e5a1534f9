#include "discovery/word_hash_table.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <list>
#include <mutex>
#include <tuple>

#include "blur/discovery/prefix_hash.h"

namespace blur::collector {

// table_[(p * 28 + c) * seeds + s]: each the xor of the images of c's set
// bits, the image of bit j being top(A x^j) (low bits 0..59) or top(B x^j)
// (high bits 0..19 as 60..79).
WordHashTable::WordHashTable(uint32_t key_level, uint32_t positions, uint32_t seeds,
                             uint32_t bucket_bits)
    : seeds_(seeds), bits_(bucket_bits) {
  table_.assign(size_t{positions} * blur::kWordAlphabet * seeds_, 0);
  const uint32_t shift = 64 - bits_;
  for (uint32_t s = 0; s < seeds_; ++s) {
    const blur::PrefixHashKey key = blur::prefix_hash_key(key_level, s);
    std::array<uint8_t, 80> image{};
    uint64_t a = key.a, b = key.b;
    for (uint32_t j = 0; j < 60; ++j) {
      image[j] = static_cast<uint8_t>(a >> shift);
      a = blur::gf64_times_x(a);
    }
    for (uint32_t j = 0; j < 20; ++j) {
      image[60 + j] = static_cast<uint8_t>(b >> shift);
      b = blur::gf64_times_x(b);
    }
    for (uint32_t p = 0; p < positions; ++p) {
      for (uint32_t code = 1; code < blur::kWordAlphabet; ++code) {
        uint8_t bucket = 0;
        for (uint32_t bit = 0; bit < blur::kWordBitsPerCharacter; ++bit) {
          if ((code >> bit) & 1u) bucket ^= image[blur::kWordBitsPerCharacter * p + bit];
        }
        table_[(size_t{p} * blur::kWordAlphabet + code) * seeds_ + s] = bucket;
      }
    }
  }
}

void WordHashTable::hash(const blur::Word& word, uint8_t* hashes) const {
  std::fill(hashes, hashes + seeds_, 0);
  // Eight seeds per xor (the buffers may alias as far as the compiler
  // knows, so it would not vectorize a byte loop); the rest byte by byte.
  const uint32_t words = seeds_ / 8;
  for (uint32_t p = 0; p < word.length; ++p) {
    const uint8_t* r = row(p, word.code(p));
    for (uint32_t w = 0; w < words; ++w) {
      uint64_t a, b;
      std::memcpy(&a, hashes + 8 * w, 8);
      std::memcpy(&b, r + 8 * w, 8);
      a ^= b;
      std::memcpy(hashes + 8 * w, &a, 8);
    }
    for (uint32_t s = 8 * words; s < seeds_; ++s) hashes[s] ^= r[s];
  }
}

uint64_t WordHashTable::support(const uint64_t* counts, const uint8_t* hashes,
                                const uint8_t* extra) const {
  uint64_t sum = 0;
  if (extra == nullptr) {
    for (uint32_t s = 0; s < seeds_; ++s) sum += counts[(size_t{s} << bits_) | hashes[s]];
  } else {
    for (uint32_t s = 0; s < seeds_; ++s) {
      sum += counts[(size_t{s} << bits_) | (hashes[s] ^ extra[s])];
    }
  }
  return sum;
}

std::shared_ptr<const WordHashTable> shared_word_table(uint32_t key_level, uint32_t positions,
                                                       uint32_t seeds, uint32_t bucket_bits) {
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>;
  static std::mutex mutex;
  static std::list<std::pair<Key, std::shared_ptr<const WordHashTable>>> kept;  // recent first
  const Key key{key_level, positions, seeds, bucket_bits};
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (it->first == key) {
        kept.splice(kept.begin(), kept, it);
        return kept.front().second;
      }
    }
  }
  // Built outside the lock: another decoder's tables stay available. Two
  // first users may both build it; the first kept is the one shared.
  auto table = std::make_shared<const WordHashTable>(key_level, positions, seeds, bucket_bits);
  std::lock_guard<std::mutex> lock(mutex);
  for (const auto& entry : kept) {
    if (entry.first == key) return entry.second;
  }
  kept.emplace_front(key, std::move(table));
  if (kept.size() > kSharedTables) kept.pop_back();
  return kept.front().second;
}

}  // namespace blur::collector
