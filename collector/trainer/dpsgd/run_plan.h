// A training run's plan, kept in its checkpoint so that a resumed run
// trains and accounts exactly what it started (trainer.h).
//
// "requested": the options that shape what the run trains and spends,
// keyed by their command-line names ("epochs", "epsilon", "seed", ...).
// "derived": what the run computed from them and the data once: the
// estimate of N and its source, q, the expected batch, the steps T, sigma,
// the vocabulary phase. On resume the derived values are used as they are
// (the DP count of N is not drawn again), and a requested option given on
// the command line must equal the plan's.
#ifndef BLUR_TRAINER_DPSGD_RUN_PLAN_H
#define BLUR_TRAINER_DPSGD_RUN_PLAN_H

#include <nlohmann/json.hpp>

#include "trainer/dpsgd/trainer.h"

namespace blur::trainer {

// The options that shape what a run trains and accounts.
nlohmann::json requested_settings(const TrainOptions& options);

// `options` with every requested setting taken from `requested` (a plan's).
// Throws std::invalid_argument naming the first option in options.given
// whose value differs from the plan's.
TrainOptions resumed_options(const TrainOptions& options, const nlohmann::json& requested);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DPSGD_RUN_PLAN_H
