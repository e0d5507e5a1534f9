// A token bucket per key (a source address, an enrollment secret): at most
// `per_hour` events per key in any hour, in bursts of up to `per_hour`.
// Keys live in memory only and are forgotten once their bucket is full
// again; nothing of them is logged or stored.
#ifndef BLUR_COLLECTOR_AUTH_RATE_LIMITER_H
#define BLUR_COLLECTOR_AUTH_RATE_LIMITER_H

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace blur::collector::auth {

class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  // `max_keys` bounds the memory: when that many keys have partly used
  // buckets, a new key is refused (fail closed) until some refill.
  explicit RateLimiter(uint32_t per_hour, size_t max_keys = 1 << 20);

  // Takes one event from `key`'s bucket; false (take nothing) if empty.
  // *retry_after: whole seconds until one event would be allowed.
  bool allow(std::string_view key, Clock::time_point now, uint32_t* retry_after);

  // For callers that combine buckets under a lock of their own: the events
  // `key` may take now (the bucket's tokens; the capacity for a key not
  // seen, 0 when a new key would not fit in max_keys)...
  double available(std::string_view key, Clock::time_point now);
  // ...and taking one (after available() >= 1; false if it did not fit).
  bool take(std::string_view key, Clock::time_point now);
  // Whole seconds until `key` has `tokens` again (its bucket at `level` now).
  uint32_t seconds_until(double level, double tokens) const;
  double capacity() const { return capacity_; }

  size_t keys() const;

 private:
  struct Bucket {
    double tokens;
    Clock::time_point updated;
  };
  double refilled(const Bucket& bucket, Clock::time_point now) const;
  void forget_full_buckets(Clock::time_point now);

  const double capacity_;
  const double per_second_;
  const size_t max_keys_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_RATE_LIMITER_H
