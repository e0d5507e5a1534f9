// A hash for unordered containers whose keys a client chooses (device
// nonces, source addresses): SplitMix64's finalizer over the key xor a
// random seed drawn once per process. libstdc++'s std::hash<uint64_t> is the
// identity, so a client choosing keys equal modulo the bucket count could
// pile them into one bucket and turn each O(1) look-up into a walk of the
// whole table; without the seed it cannot aim. (Not a MAC: enough against
// keys chosen blind, which is all a network client has.)
#ifndef BLUR_COLLECTOR_UTIL_KEYED_HASH_H
#define BLUR_COLLECTOR_UTIL_KEYED_HASH_H

#include <cstddef>
#include <cstdint>
#include <random>

namespace blur::collector {

struct KeyedHash {
  std::size_t operator()(uint64_t key) const noexcept {
    static const uint64_t seed = [] {
      std::random_device device;
      return (uint64_t{device()} << 32) ^ device();
    }();
    uint64_t z = key ^ seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<std::size_t>(z ^ (z >> 31));
  }
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_KEYED_HASH_H
