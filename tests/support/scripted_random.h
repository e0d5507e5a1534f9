// A random source for fault injection in tests only: it returns a fixed
// choice for every draw, or fails, so that sampler edge cases (iteration
// caps, error propagation) can be reached deterministically.
#ifndef BLUR_TESTS_SCRIPTED_RANDOM_H
#define BLUR_TESTS_SCRIPTED_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include "blur/status.h"

namespace blur_test {

class ScriptedRandomForFaultInjection {
 public:
  enum class Mode { kAlwaysZero, kAlwaysMax, kFail };
  explicit ScriptedRandomForFaultInjection(Mode mode) : mode_(mode) {}

  blur::Status uniform(uint64_t bound, uint64_t* out) {
    ++draws_;
    if (mode_ == Mode::kFail) return blur::Status::kEntropyFailure;
    *out = mode_ == Mode::kAlwaysZero ? 0 : bound - 1;
    return blur::Status::kOk;
  }
  blur::Status fill(uint8_t* out, size_t length) {
    ++draws_;
    if (mode_ == Mode::kFail) return blur::Status::kEntropyFailure;
    for (size_t i = 0; i < length; ++i) out[i] = mode_ == Mode::kAlwaysZero ? 0 : 0xFF;
    return blur::Status::kOk;
  }
  uint64_t draws() const { return draws_; }

 private:
  Mode mode_;
  uint64_t draws_ = 0;
};

}  // namespace blur_test

#endif  // BLUR_TESTS_SCRIPTED_RANDOM_H
