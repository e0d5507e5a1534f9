// Work split over threads, the one way the trainer does it: the noise
// samplers (gaussian_noise, discrete_gaussian) and the model's workers
// (model/parallel.h).
#ifndef BLUR_TRAINER_RANDOM_RUN_IN_SHARES_H
#define BLUR_TRAINER_RANDOM_RUN_IN_SHARES_H

#include <cstddef>
#include <functional>

namespace blur::trainer {

// Runs body(begin, end) over [0, n) split into min(threads, n) contiguous
// shares of ceil(n / shares) items (the last ones may be shorter or empty;
// empty ones are skipped): share 0 on the calling thread, one new thread for
// each other. Waits for all of them, then rethrows the exception of the
// first share (in share order) that threw.
void run_in_shares(size_t n, size_t threads, const std::function<void(size_t, size_t)>& body);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_RANDOM_RUN_IN_SHARES_H
