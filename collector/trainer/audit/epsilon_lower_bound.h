// The epsilon lower bound of a one-run audit (Steinke, Nasr, Jagielski,
// "Privacy Auditing with One (1) Training Run", NeurIPS 2023,
// arXiv 2305.08846, Theorem 3.2 and their Algorithm 2):
//
// m canaries, each included by an independent fair coin; an auditor makes
// `guesses` guesses of the coins (abstaining on the rest) and `correct` of
// them are right. If the training is (epsilon, delta)-DP, then
//   P[correct >= v] <= beta + 2 m delta alpha,
//   beta  = P[Binomial(guesses, p) >= v],  p = e^eps / (1 + e^eps),
//   alpha = max_{i=1..v} P[v - i <= Binomial(guesses, p) < v] / i.
// The bound is the largest epsilon at which this p-value is below
// 1 - confidence: with probability >= confidence an (epsilon, delta)-DP
// training gives a bound <= its epsilon (false alarm <= 1 - confidence).
#ifndef BLUR_TRAINER_AUDIT_EPSILON_LOWER_BOUND_H
#define BLUR_TRAINER_AUDIT_EPSILON_LOWER_BOUND_H

#include <cstdint>

namespace blur::trainer {

// The p-value above. Requires correct <= guesses <= canaries, eps >= 0,
// delta in [0, 1].
double one_run_audit_p_value(uint64_t canaries, uint64_t guesses, uint64_t correct, double epsilon,
                             double delta);

// The largest epsilon (to 1e-6, at most 50) whose p-value is below
// 1 - confidence; 0 if even epsilon = 0 is not rejected.
double one_run_epsilon_lower_bound(uint64_t canaries, uint64_t guesses, uint64_t correct,
                                   double delta, double confidence = 0.95);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_AUDIT_EPSILON_LOWER_BOUND_H
