// Renyi-DP accountant for the Poisson-subsampled Gaussian mechanism
// (DP-SGD), docs/math.md §6.2-§6.4.
//
// One step at sampling rate q with noise multiplier sigma has
//   RDP(alpha) = ln(A_alpha) / (alpha - 1)
// (Mironov, Talwar, Zhang, "Renyi Differential Privacy of the Sampled
// Gaussian Mechanism", 2019); steps and phases add in RDP. Integer orders
// use the finite binomial sum, fractional orders the two-sided series with
// erfc terms. For fractional alpha the binomial coefficients C(alpha, i)
// turn negative past i = alpha + 1; like dp_accounting since 2024 we add
// their absolute values, an upper bound on A_alpha (so never an
// under-estimate of epsilon).
//
// (epsilon, delta): the minimum over the orders of
//   improved (Balle et al. 2020, "Hypothesis testing interpretations and
//   Renyi DP"; TF Privacy, dp_accounting, Opacus):
//     RDP(a) + ln(1 - 1/a) - (ln delta + ln a) / (a - 1)
//   classic (Mironov 2017): RDP(a) - ln(delta) / (a - 1).
// Default orders are dp_accounting's: 1.1, 1.2, ..., 10.9, 11, 12, ..., 63,
// 128, 256, 512, 1024.
#ifndef BLUR_TRAINER_ACCOUNTANTS_RDP_ACCOUNTANT_H
#define BLUR_TRAINER_ACCOUNTANTS_RDP_ACCOUNTANT_H

#include <cstdint>
#include <functional>
#include <vector>

namespace blur::trainer {

enum class RdpConversion { kImproved, kClassic };

// RDP at order alpha (> 1) of ONE step; +inf for sigma = 0 (q > 0).
// Throws std::invalid_argument outside q in [0, 1], sigma >= 0, alpha > 1.
double rdp_sampled_gaussian(double q, double sigma, double alpha);

const std::vector<double>& default_rdp_orders();

struct EpsilonAtDelta {
  double epsilon = 0;
  double order = 0;  // the order that gave the minimum
};

// The conversion of an RDP curve (rdp[k] at orders[k]) to epsilon at delta.
EpsilonAtDelta epsilon_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                                double delta, RdpConversion conversion = RdpConversion::kImproved);

class RdpAccountant {
 public:
  RdpAccountant();
  explicit RdpAccountant(std::vector<double> orders);  // each > 1

  // A phase: `steps` steps at rate q with noise multiplier sigma.
  void add(double q, double sigma, uint64_t steps);
  // RDP of everything added, per order (orders() order).
  const std::vector<double>& rdp() const { return rdp_; }
  const std::vector<double>& orders() const { return orders_; }
  // Throws std::invalid_argument unless 0 < delta < 1.
  EpsilonAtDelta epsilon(double delta, RdpConversion conversion = RdpConversion::kImproved) const;

 private:
  std::vector<double> orders_;
  std::vector<double> rdp_;
};

// The smallest sigma (to a relative 1e-6, found by doubling then
// bisection) with epsilon_of(sigma) <= target_epsilon; the returned sigma
// always meets the target. epsilon_of must decrease in sigma. Throws
// std::invalid_argument if even sigma = 1e4 misses the target.
double calibrate_noise_multiplier(const std::function<double(double)>& epsilon_of,
                                  double target_epsilon);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_ACCOUNTANTS_RDP_ACCOUNTANT_H
