// The keyed hash that places a value's bits in a RAPPOR Bloom filter. The
// device and the collector compute the same positions from public inputs.
//
//   digest = SHA-256("blur.bloom.v1" (13 bytes) || metric_id (4 bytes LE)
//                    || hash_key (8 bytes LE) || cohort (4 bytes LE)
//                    || length (4 bytes LE) || value bytes)
//   position j = (digest[2j] | digest[2j + 1] << 8) mod bloom_bits, j < h
//
// bloom_bits is a power of two, so "mod" keeps exactly the low bits: every
// position is uniform over the filter (no modulo bias). The tag and the
// metric id separate Blur's Bloom hashes from any other use of SHA-256 and
// one metric's filters from another's; hash_key is the metric's public
// seed (rotate it to re-randomize collisions); the length prefix keeps
// (cohort, value) pairs unambiguous. Integer values are hashed as their
// decimal ASCII text ("0", "17", ...), so an integer metric and a string
// metric with the same candidates agree.
#ifndef BLUR_BLOOM_HASH_H
#define BLUR_BLOOM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "blur/status.h"

namespace blur {

struct BloomHashKey {
  uint32_t metric_id;
  uint64_t hash_key;
};

inline constexpr uint32_t kMaxBloomHashes = 16;  // 16 two-byte positions per digest

// Writes hash_count positions in [0, bloom_bits). kInvalidArgument unless
// bloom_bits is a power of two in [8, 65536] and 1 <= hash_count <=
// kMaxBloomHashes; kCryptoFailure if SHA-256 fails.
Status bloom_positions(BloomHashKey key, uint32_t cohort, const uint8_t* value, size_t length,
                       uint32_t bloom_bits, uint32_t hash_count, uint16_t* positions);

// The decimal ASCII text of `value` (no terminator) in out[0..10); returns its length.
size_t decimal_text(uint32_t value, char out[10]);

}  // namespace blur

#endif  // BLUR_BLOOM_HASH_H
