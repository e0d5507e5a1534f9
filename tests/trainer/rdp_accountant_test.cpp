// The RDP accountant against published values of the trusted peers (each
// cited next to its number) and its own properties.
#include "trainer/accountants/rdp_accountant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace {

using blur::trainer::RdpAccountant;
using blur::trainer::RdpConversion;

// Relative agreement to 4 significant digits (and tighter where the peers
// publish more).
void expect_relative(double actual, double expected, double tolerance) {
  EXPECT_LE(std::fabs(actual - expected), tolerance * std::fabs(expected))
      << "actual " << actual << ", expected " << expected;
}

std::vector<double> opacus_orders() {  // opacus/accountants/rdp.py DEFAULT_ALPHAS
  std::vector<double> orders;
  for (int x = 1; x <= 99; ++x) orders.push_back(1 + x / 10.0);
  for (int x = 12; x <= 63; ++x) orders.push_back(x);
  return orders;
}

// google/differential-privacy python/dp_accounting/dp_accounting/rdp/
// rdp_privacy_accountant_test.py, test_compute_rdp_poisson_sampled_gaussian:
// q = 0.01, sigma = 2.5, 50 steps, rtol 1e-4.
TEST(RdpAccountant, DpAccountingPoissonSampledGaussian) {
  const double orders[] = {1.5, 2.5, 5, 50, 100};
  const double published[] = {6.70579741e-04, 1.08548710e-03, 2.18075656e-03, 2.38460375e-02,
                              1.67416308e02};
  for (int k = 0; k < 5; ++k) {
    expect_relative(50 * blur::trainer::rdp_sampled_gaussian(0.01, 2.5, orders[k]), published[k],
                    1e-4);
  }
  EXPECT_TRUE(std::isinf(
      blur::trainer::rdp_sampled_gaussian(0.01, 2.5, std::numeric_limits<double>::infinity())));
}

// Same file, test_compute_epsilon_delta_pure_dp: orders 2..32, RDP 1.1 at
// each, delta 1e-5 -> epsilon 1.32783806176 at order 32 (improved conversion).
TEST(RdpAccountant, DpAccountingPureDpConversion) {
  std::vector<double> orders, rdp;
  for (int a = 2; a <= 32; ++a) {
    orders.push_back(a);
    rdp.push_back(1.1);
  }
  const auto e = blur::trainer::epsilon_from_rdp(orders, rdp, 1e-5);
  expect_relative(e.epsilon, 1.32783806176, 1e-10);
  EXPECT_EQ(e.order, 32);
}

// Same file, test_compute_epsilon_delta_gaussian: q = 1, sigma = 4.530877117
// is (1, 1e-6)-DP over the orders 1.001 .. 99.999 (step 0.001).
TEST(RdpAccountant, DpAccountingGaussianIsOneAtOneInAMillion) {
  std::vector<double> orders;
  for (int i = 1001; i < 100000; ++i) orders.push_back(0.001 * i);
  RdpAccountant accountant(orders);
  accountant.add(1.0, 4.530877117, 1);
  expect_relative(accountant.epsilon(1e-6).epsilon, 1.0, 1e-7);
  // q = 1 is the plain Gaussian mechanism: alpha / (2 sigma^2) (test_compute_rdp_gaussian).
  expect_relative(blur::trainer::rdp_sampled_gaussian(1.0, 2.71828, 3.14159),
                  3.14159 / (2 * 2.71828 * 2.71828), 1e-12);
}

// TF Privacy's compute_dp_sgd_privacy test (MNIST: N 60000, batch 150,
// sigma 1.3, 15 epochs, delta 1e-5 -> 0.7242), docs/math.md §6.6; default
// dp_accounting orders, improved conversion.
TEST(RdpAccountant, TfPrivacyMnistAnchor) {
  RdpAccountant accountant;
  accountant.add(150.0 / 60000, 1.3, 15 * 60000 / 150);
  expect_relative(accountant.epsilon(1e-5).epsilon, 0.7242, 1e-4);
}

// pytorch/opacus opacus/tests/accountants_test.py:
//   test_rdp_accountant: sigma 1.5, q 0.04, int(90 / 0.04) steps, delta
//   1e-5 -> 7.32911117143. Opacus adds signed binomial terms for fractional
//   orders; we add absolute values (an upper bound): 7.32933, equal to 4
//   significant digits and never below.
//   test_get_noise_multiplier_rdp_epochs / _steps: epsilon 8, delta 1e-5,
//   q 0.04, 90 epochs -> sigma 1.416; 2000 steps -> 1.3562.
TEST(RdpAccountant, OpacusValues) {
  RdpAccountant accountant(opacus_orders());
  accountant.add(0.04, 1.5, 2250);
  const double epsilon = accountant.epsilon(1e-5).epsilon;
  expect_relative(epsilon, 7.32911117143, 1e-4);
  EXPECT_GE(epsilon, 7.32911117143);
  auto sigma_for = [](uint64_t steps) {
    return blur::trainer::calibrate_noise_multiplier(
        [steps](double s) {
          RdpAccountant a(opacus_orders());
          a.add(0.04, s, steps);
          return a.epsilon(1e-5).epsilon;
        },
        8.0);
  };
  expect_relative(sigma_for(2250), 1.416, 1e-4);
  expect_relative(sigma_for(2000), 1.3562, 1e-4);
}

// Heterogeneous phases add in RDP: a vocabulary Gaussian (q = 1, one step)
// then two DP-SGD phases equal the sum of their separate curves.
TEST(RdpAccountant, PhasesCompose) {
  RdpAccountant all, vocabulary, first, second;
  all.add(1.0, 3.0, 1);
  all.add(0.01, 1.1, 500);
  all.add(0.02, 0.9, 100);
  vocabulary.add(1.0, 3.0, 1);
  first.add(0.01, 1.1, 500);
  second.add(0.02, 0.9, 100);
  for (size_t k = 0; k < all.orders().size(); ++k) {
    expect_relative(all.rdp()[k], vocabulary.rdp()[k] + first.rdp()[k] + second.rdp()[k], 1e-12);
  }
  EXPECT_GT(all.epsilon(1e-5).epsilon, first.epsilon(1e-5).epsilon);
}

TEST(RdpAccountant, PropertiesAndSpecialCases) {
  auto eps = [](double q, double sigma, uint64_t steps,
                RdpConversion c = RdpConversion::kImproved) {
    RdpAccountant a;
    a.add(q, sigma, steps);
    return a.epsilon(1e-5, c).epsilon;
  };
  EXPECT_EQ(eps(0.0, 1.0, 1000), 0.0);                    // never sampled
  EXPECT_TRUE(std::isinf(eps(0.01, 0.0, 1)));             // no noise
  EXPECT_LT(eps(0.01, 1.2, 1000), eps(0.01, 1.0, 1000));  // more noise, less loss
  EXPECT_GT(eps(0.01, 1.0, 2000), eps(0.01, 1.0, 1000));  // more steps, more loss
  EXPECT_GT(eps(0.02, 1.0, 1000), eps(0.01, 1.0, 1000));  // larger samples, more loss
  EXPECT_LT(eps(0.01, 1.0, 1000), eps(0.01, 1.0, 1000, RdpConversion::kClassic));  // tighter
  // Integer and fractional formulas meet: alpha 3 vs 3 + 1e-7.
  expect_relative(blur::trainer::rdp_sampled_gaussian(0.01, 1.0, 3.0),
                  blur::trainer::rdp_sampled_gaussian(0.01, 1.0, 3.0000001), 1e-6);
  // Tiny q and sigma with large orders stay finite (ln erfc asymptotics).
  EXPECT_TRUE(std::isfinite(blur::trainer::rdp_sampled_gaussian(1e-5, 0.1, 256.1)));
  EXPECT_THROW(blur::trainer::rdp_sampled_gaussian(1.5, 1.0, 2.0), std::invalid_argument);
  EXPECT_THROW(blur::trainer::rdp_sampled_gaussian(0.1, 1.0, 1.0), std::invalid_argument);
  RdpAccountant a;
  EXPECT_THROW(a.epsilon(0.0), std::invalid_argument);
  EXPECT_THROW(a.epsilon(1.0), std::invalid_argument);
}

// Calibration returns a sigma that meets the target, and barely: 1e-4
// less noise misses it.
TEST(RdpAccountant, CalibrationRoundTrip) {
  auto eps = [](double s) {
    RdpAccountant a;
    a.add(1.0, 3.0, 1);
    a.add(256.0 / 12000, s, 200);
    return a.epsilon(1e-5).epsilon;
  };
  for (double target : {2.0, 3.0, 8.0}) {  // the vocabulary phase alone is 1.66
    const double sigma = blur::trainer::calibrate_noise_multiplier(eps, target);
    EXPECT_LE(eps(sigma), target);
    EXPECT_GT(eps(sigma * (1 - 1e-4)), target);
  }
  EXPECT_THROW(blur::trainer::calibrate_noise_multiplier(eps, 1.0e-3), std::invalid_argument);
}

}  // namespace
