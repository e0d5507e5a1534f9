// One-sided Clopper-Pearson bounds of a binomial proportion and the
// empirical privacy-loss lower bound of an audit (docs/privacy-audit.md):
// with k1 of n1 devices flagged under history h1 and k0 of n0 under h0,
//   eps_lower = ln(TPR_low / FPR_high),
// TPR_low the one-sided lower bound of k1 / n1 and FPR_high the one-sided
// upper bound of k0 / n0, each at confidence 1 - alpha (MATH.md §5: alpha
// = 0.05), so that eps_lower exceeds the true loss with probability at
// most 2 alpha (a union bound over the two): the false-alarm rate of the
// assertion "eps_lower <= charged" for a mechanism that keeps its charge.
#ifndef BLUR_TOOLS_DEVICE_SIM_CLOPPER_PEARSON_H
#define BLUR_TOOLS_DEVICE_SIM_CLOPPER_PEARSON_H

#include <cstdint>

namespace blur::sim {

// The regularized incomplete beta function I_x(a, b), a, b > 0.
double regularized_incomplete_beta(double a, double b, double x);

// The p with P(Binomial(n, p) >= k) = alpha (0 when k = 0): the one-sided
// lower confidence bound of k / n at 1 - alpha.
double clopper_pearson_lower(uint64_t k, uint64_t n, double alpha);
// The p with P(Binomial(n, p) <= k) = alpha (1 when k = n).
double clopper_pearson_upper(uint64_t k, uint64_t n, double alpha);

struct LossBound {
  double tpr_low;
  double fpr_high;
  double epsilon_lower;  // ln(tpr_low / fpr_high); -inf when tpr_low = 0
};
LossBound epsilon_lower_bound(uint64_t k1, uint64_t n1, uint64_t k0, uint64_t n0, double alpha);  // alpha per side

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_CLOPPER_PEARSON_H
