#include "auth/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace blur::collector::auth {

RateLimiter::RateLimiter(uint32_t per_hour, size_t max_keys)
    : capacity_(per_hour), per_second_(per_hour / 3600.0), max_keys_(max_keys) {}

double RateLimiter::refilled(const Bucket& bucket, Clock::time_point now) const {
  const double seconds = std::chrono::duration<double>(now - bucket.updated).count();
  return std::min(capacity_, bucket.tokens + std::max(0.0, seconds) * per_second_);
}

void RateLimiter::forget_full_buckets(Clock::time_point now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    it = refilled(it->second, now) >= capacity_ ? buckets_.erase(it) : std::next(it);
  }
}

bool RateLimiter::allow(std::string_view key, Clock::time_point now, uint32_t* retry_after) {
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(std::string(key));
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) forget_full_buckets(now);
    if (buckets_.size() >= max_keys_ || capacity_ < 1) {
      if (retry_after != nullptr) *retry_after = 60;
      return false;
    }
    it = buckets_.emplace(std::string(key), Bucket{capacity_, now}).first;
  }
  Bucket& bucket = it->second;
  bucket.tokens = refilled(bucket, now);
  bucket.updated = now;
  if (bucket.tokens < 1) {
    if (retry_after != nullptr) {
      *retry_after = static_cast<uint32_t>(std::ceil((1 - bucket.tokens) / per_second_));
    }
    return false;
  }
  bucket.tokens -= 1;
  return true;
}

size_t RateLimiter::keys() const {
  std::lock_guard lock(mutex_);
  return buckets_.size();
}

}  // namespace blur::collector::auth
