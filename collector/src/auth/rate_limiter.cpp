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

double RateLimiter::available(std::string_view key, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto it = buckets_.find(std::string(key));
  if (it != buckets_.end()) return refilled(it->second, now);
  if (buckets_.size() >= max_keys_) forget_full_buckets(now);
  return buckets_.size() >= max_keys_ ? 0 : capacity_;
}

bool RateLimiter::take(std::string_view key, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = buckets_.find(std::string(key));
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) return false;
    it = buckets_.emplace(std::string(key), Bucket{capacity_, now}).first;
  }
  it->second.tokens = refilled(it->second, now) - 1;
  it->second.updated = now;
  return true;
}

uint32_t RateLimiter::seconds_until(double level, double tokens) const {
  if (level >= tokens) return 0;
  if (per_second_ <= 0 || tokens > capacity_) return 3600;
  return static_cast<uint32_t>(std::ceil((tokens - level) / per_second_));
}

size_t RateLimiter::keys() const {
  std::lock_guard lock(mutex_);
  return buckets_.size();
}

}  // namespace blur::collector::auth
