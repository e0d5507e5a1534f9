// Word-discovery results kept by what they were found from: the metric, the
// top_k and the aggregate's fingerprint (Aggregate::fingerprint, keyed per
// process: any report added to the range changes it). A closed time bucket
// or a series period that received nothing new is answered from here
// instead of being discovered again; a new report, late or backdated
// included, makes a new key, and the stale entry ages out. Least recently
// used entries go first once the kept words pass the capacity.
// Thread-safe.
#ifndef BLUR_COLLECTOR_DISCOVERY_DISCOVERY_CACHE_H
#define BLUR_COLLECTOR_DISCOVERY_DISCOVERY_CACHE_H

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "discovery/word_discovery.h"

namespace blur::collector {

class DiscoveryCache {
 public:
  struct Key {
    uint32_t metric_id = 0;
    uint32_t top_k = 0;
    uint64_t reports = 0;
    uint64_t fingerprint = 0;
    bool operator<(const Key& other) const {
      return std::tie(metric_id, top_k, reports, fingerprint) <
             std::tie(other.metric_id, other.top_k, other.reports, other.fingerprint);
    }
  };
  // Words kept over all entries (each about 100 bytes): 200,000 by default.
  explicit DiscoveryCache(size_t capacity_words = 200000) : capacity_(capacity_words) {}

  std::optional<Discovery> find(const Key& key);
  // A cancelled discovery is not kept.
  void put(const Key& key, const Discovery& found);

  uint64_t hits() const;
  uint64_t misses() const;

 private:
  using Entries = std::list<std::pair<Key, Discovery>>;
  mutable std::mutex mutex_;
  size_t capacity_;
  size_t words_ = 0;
  Entries entries_;  // most recently used first
  std::map<Key, Entries::iterator> index_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_DISCOVERY_CACHE_H
