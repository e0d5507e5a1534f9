#include "discovery/discovery_cache.h"

namespace blur::collector {

std::optional<Discovery> DiscoveryCache::find(const Key& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = index_.find(key);
  if (found == index_.end()) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  entries_.splice(entries_.begin(), entries_, found->second);
  return found->second->second;
}

void DiscoveryCache::put(const Key& key, const Discovery& found) {
  if (found.cancelled) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (index_.count(key) != 0) return;  // found twice at once: the same words
  entries_.emplace_front(key, found);
  index_[key] = entries_.begin();
  words_ += found.words.size() + 1;  // an empty answer still takes room
  while (words_ > capacity_ && entries_.size() > 1) {
    words_ -= entries_.back().second.words.size() + 1;
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
}

uint64_t DiscoveryCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

uint64_t DiscoveryCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return misses_;
}

}  // namespace blur::collector
