// Result<T>: a value or the Status saying why there is none (pw::Result's
// idea, trimmed). Builders return it, so an object that exists is valid.
#ifndef BLUR_RESULT_H
#define BLUR_RESULT_H

#include "blur/compat/std_facilities.h"

#include "blur/status.h"

namespace blur {

// T must be trivially copyable and destructible (plain device values), so a
// failed Result needs no T at all: T has no default constructor to misuse.
template <typename T>
class [[nodiscard]] Result {
  static_assert(std::is_trivially_copyable<T>::value && std::is_trivially_destructible<T>::value,
                "Result<T> holds plain values");

 public:
  using value_type = T;

  // A failed result; `status` must not be kOk (kOk becomes kInvalidArgument).
  constexpr Result(Status status)  // NOLINT(google-explicit-constructor)
      : status_(status == Status::kOk ? Status::kInvalidArgument : status), empty_() {}
  constexpr Result(const T& value)  // NOLINT(google-explicit-constructor)
      : status_(Status::kOk), value_(value) {}

  constexpr bool ok() const { return status_ == Status::kOk; }
  constexpr Status status() const { return status_; }
  // Precondition: ok().
  constexpr const T& value() const { return value_; }

 private:
  struct Empty {};
  Status status_;
  union {
    Empty empty_;
    T value_;
  };
};

}  // namespace blur

#endif  // BLUR_RESULT_H
