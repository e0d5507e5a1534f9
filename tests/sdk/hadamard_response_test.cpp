#include "blur/mechanisms/hadamard_response.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::HadamardResponse;
using blur::Status;

bool in_half(uint32_t value, uint32_t j) { return (__builtin_popcount((value + 1) & j) & 1) == 0; }

TEST(HadamardResponse, BuilderAndSizes) {
  EXPECT_EQ(HadamardResponse::create(1000000, 1).status(), Status::kInvalidArgument);
  EXPECT_EQ(HadamardResponse::create(1000000, 1u << 16).status(), Status::kInvalidArgument);
  EXPECT_EQ(blur::hadamard_size(7), 8u);
  EXPECT_EQ(blur::hadamard_size(8), 16u);
  EXPECT_EQ(blur::hadamard_size(65535), 65536u);
  const auto hr = HadamardResponse::create(1000000, 7);
  ASSERT_TRUE(hr.ok());
  EXPECT_EQ(hr.value().output_size(), 8u);
}

// The whole output distribution over j in [0, K) for a fixed input against
// the exact pmf (2p/K inside the value's half, 2(1-p)/K outside), chi-square
// with false-alarm rate 1e-6; the sample also rejects p off by 0.02. Then
// the empirical privacy loss: outputs in S_a but not S_b are e^eps times
// likelier from a than from b (5 standard errors of the log-ratio).
TEST(HadamardResponse, OutputDistributionAndPrivacyLoss) {
  blur::sim::SimPort port(61);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 100000;
  for (uint32_t epsilon_micros : {1000000u, 3000000u}) {
    const auto hr = HadamardResponse::create(epsilon_micros, 7);
    ASSERT_TRUE(hr.ok());
    const double e = exp(epsilon_micros / 1e6);
    const double p = e / (e + 1);
    uint64_t counts[8] = {};
    uint64_t only_a_from_a = 0, only_a_from_b = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t j = 0;
      ASSERT_EQ(hr.value().randomize(rng, 3, &j), Status::kOk);
      ASSERT_LT(j, 8u);
      ++counts[j];
      only_a_from_a += in_half(3, j) && !in_half(5, j);
      ASSERT_EQ(hr.value().randomize(rng, 5, &j), Status::kOk);
      only_a_from_b += in_half(3, j) && !in_half(5, j);
    }
    double pmf[8], wrong[8];
    for (uint32_t j = 0; j < 8; ++j) {
      pmf[j] = (in_half(3, j) ? p : 1 - p) * 2 / 8;
      wrong[j] = (in_half(3, j) ? p + 0.02 : 1 - p - 0.02) * 2 / 8;
    }
    const double critical = blur_test::chi_square_critical_1e6(7);
    EXPECT_LT(blur_test::chi_square(counts, pmf, 8, n), critical);
    EXPECT_GT(blur_test::chi_square(counts, wrong, 8, n), critical);
    const double pa = static_cast<double>(only_a_from_a) / n;
    const double pb = static_cast<double>(only_a_from_b) / n;
    const double se = sqrt((1 - pa) / (n * pa) + (1 - pb) / (n * pb));
    EXPECT_LT(fabs(log(pa / pb) - epsilon_micros / 1e6), 5 * se);
  }
}

}  // namespace
