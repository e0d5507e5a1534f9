// Connections held per key, for the per-source connection caps (a source
// address, a device certificate's nonce): one map entry per key that holds
// a connection, erased with its last one, so the memory is bounded by the
// connections open, and every call is O(1) (KeyedHash: the keys are the
// clients' to choose). Not thread-safe: the server's mutex guards it.
#ifndef BLUR_COLLECTOR_SERVER_CONNECTION_COUNTS_H
#define BLUR_COLLECTOR_SERVER_CONNECTION_COUNTS_H

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "util/keyed_hash.h"

namespace blur::collector::http {

class ConnectionCounts {
 public:
  // The connections `key` holds.
  std::size_t of(uint64_t key) const {
    const auto found = counts_.find(key);
    return found == counts_.end() ? 0 : found->second;
  }
  // Counts one more connection of `key`, unless it holds `limit` already.
  bool try_add(uint64_t key, std::size_t limit) {
    std::size_t& count = counts_[key];
    if (count >= limit) {
      if (count == 0) counts_.erase(key);  // limit 0: no entry left behind
      return false;
    }
    ++count;
    return true;
  }
  // One connection of `key` (counted by try_add) closed.
  void remove(uint64_t key) {
    const auto found = counts_.find(key);
    if (found != counts_.end() && --found->second == 0) counts_.erase(found);
  }
  // Keys holding a connection.
  std::size_t keys() const { return counts_.size(); }

 private:
  std::unordered_map<uint64_t, std::size_t, KeyedHash> counts_;
};

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_CONNECTION_COUNTS_H
