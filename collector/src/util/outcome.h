// A typed result for the collector: a value, or an error with a kind that
// says what the caller should do about it. Errors are values; no exception
// crosses this boundary.
#ifndef BLUR_COLLECTOR_UTIL_OUTCOME_H
#define BLUR_COLLECTOR_UTIL_OUTCOME_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace blur::collector {

struct Error {
  enum class Kind {
    kInvalid,          // the input is wrong; retrying the same request cannot help (400)
    kNotFound,         // no such metric (404)
    kConflict,         // contradicts what is stored (409)
    kUnavailable,      // storage failed or is unreachable; retry later (503)
    kUnauthenticated,  // no or no valid credentials (401)
    kForbidden,        // valid credentials, not allowed this (403)
    kTooManyRequests,  // over a rate limit; retry after retry_after_seconds (429)
  };
  Kind kind = Kind::kUnavailable;
  std::string message;
  uint32_t retry_after_seconds = 0;  // kTooManyRequests, kUnavailable: a hint; 0: none
};

inline Error invalid(std::string message) { return {Error::Kind::kInvalid, std::move(message)}; }
inline Error unavailable(std::string message) {
  return {Error::Kind::kUnavailable, std::move(message)};
}
inline Error unauthenticated(std::string message) {
  return {Error::Kind::kUnauthenticated, std::move(message)};
}

template <typename T>
class [[nodiscard]] Outcome {
 public:
  Outcome(T value) : value_(std::move(value)) {}      // NOLINT: implicit by design
  Outcome(Error error) : error_(std::move(error)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  const Error& error() const { return error_; }

 private:
  std::optional<T> value_;
  Error error_;
};

// Outcome<void>: success or an error.
struct Done {};
using Fallible = Outcome<Done>;
inline Fallible done() { return Done{}; }

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_OUTCOME_H
