#include "blur/sampling/rng.h"

#include <gtest/gtest.h>
#include <string.h>

#include "sim_port.h"
#include "stats.h"

namespace {

using blur::Rng;
using blur::Status;
using blur::sim::SimPort;

TEST(Rng, SameSeedSameStreamDifferentSeedDifferentStream) {
  SimPort a(1), b(1), c(2);
  Rng ra, rb, rc;
  ASSERT_EQ(ra.seed(a.port(), nullptr, 0), Status::kOk);
  ASSERT_EQ(rb.seed(b.port(), nullptr, 0), Status::kOk);
  ASSERT_EQ(rc.seed(c.port(), nullptr, 0), Status::kOk);
  uint8_t xa[64], xb[64], xc[64];
  ASSERT_EQ(ra.fill(xa, sizeof xa), Status::kOk);
  ASSERT_EQ(rb.fill(xb, sizeof xb), Status::kOk);
  ASSERT_EQ(rc.fill(xc, sizeof xc), Status::kOk);
  EXPECT_EQ(memcmp(xa, xb, sizeof xa), 0);
  EXPECT_NE(memcmp(xa, xc, sizeof xa), 0);
}

TEST(Rng, PersonalizationChangesTheStream) {
  SimPort a(1), b(1);
  Rng ra, rb;
  const uint8_t serial[] = {'d', 'e', 'v', '1'};
  ASSERT_EQ(ra.seed(a.port(), nullptr, 0), Status::kOk);
  ASSERT_EQ(rb.seed(b.port(), serial, sizeof serial), Status::kOk);
  uint64_t x = 0, y = 0;
  ASSERT_EQ(ra.next_u64(&x), Status::kOk);
  ASSERT_EQ(rb.next_u64(&y), Status::kOk);
  EXPECT_NE(x, y);
}

TEST(Rng, EntropyFailureAtSeedFailsClosed) {
  SimPort port(1);
  port.fail_entropy_after(0);
  Rng rng;
  EXPECT_EQ(rng.seed(port.port(), nullptr, 0), Status::kEntropyFailure);
  EXPECT_FALSE(rng.seeded());
  uint64_t x = 0;
  EXPECT_EQ(rng.next_u64(&x), Status::kEntropyFailure);
  EXPECT_EQ(rng.uniform(10, &x), Status::kEntropyFailure);
}

TEST(Rng, EntropyFailureAtReseedFailsClosedUntilReseeded) {
  SimPort port(1);
  Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  port.fail_entropy_after(0);
  // CTR_DRBG reseeds after 10000 requests (MBEDTLS_CTR_DRBG_RESEED_INTERVAL);
  // the reseed needs entropy, which now fails.
  uint8_t block[128];
  Status status = Status::kOk;
  int requests = 0;
  for (; requests < 20000 && status == Status::kOk; ++requests) {
    status = rng.fill(block, sizeof block);
  }
  EXPECT_EQ(status, Status::kEntropyFailure);
  EXPECT_LE(requests, 10001);
  EXPECT_EQ(rng.fill(block, sizeof block), Status::kEntropyFailure);  // sticky
  port.fail_entropy_after(SimPort::kNever);
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  EXPECT_EQ(rng.fill(block, sizeof block), Status::kOk);
}

TEST(Rng, UniformRejectsZeroBoundAndStaysInRange) {
  SimPort port(3);
  Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  uint64_t x = 0;
  EXPECT_EQ(rng.uniform(0, &x), Status::kInvalidArgument);
  for (uint64_t bound : {1ull, 2ull, 3ull, 1000ull, 0xFFFFFFFFull, 0x100000001ull, ~0ull}) {
    for (int i = 0; i < 200; ++i) {
      ASSERT_EQ(rng.uniform(bound, &x), Status::kOk);
      ASSERT_LT(x, bound);
    }
  }
}

// With bound = 3 * 2^30, naive `x % bound` on 32-bit words maps two inputs
// to each value below 2^30 and one to the rest: P(u < 2^30) would be 1/2.
// Rejection sampling makes it exactly 1/3. Same for 64-bit words with
// bound = 3 * 2^62. False-alarm rate 1e-6 per check.
TEST(Rng, UniformHasNoModuloBias) {
  SimPort port(4);
  Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 60000;
  const struct {
    uint64_t bound, low_part;
  } cases[] = {{3ull << 30, 1ull << 30}, {3ull << 62, 1ull << 62}};
  for (const auto& c : cases) {
    uint64_t low = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t x = 0;
      ASSERT_EQ(rng.uniform(c.bound, &x), Status::kOk);
      low += x < c.low_part;
    }
    EXPECT_LT(fabs(blur_test::binomial_z(low, n, 1.0 / 3)), blur_test::kZ1e6);
    // The same sample rejects the biased distribution decisively.
    EXPECT_GT(fabs(blur_test::binomial_z(low, n, 1.0 / 2)), blur_test::kZ1e6);
  }
}

// Chi-square goodness of fit of Unif(10) over 10 bins, 9 degrees of freedom:
// P(chi2_9 > 44.81) = 1e-6 (chi-square upper quantile).
TEST(Rng, UniformSmallBoundChiSquare) {
  SimPort port(5);
  Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 100000;
  uint64_t counts[10] = {};
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t x = 0;
    ASSERT_EQ(rng.uniform(10, &x), Status::kOk);
    ++counts[x];
  }
  double chi2 = 0;
  const double expected = static_cast<double>(n) / 10;
  for (uint64_t c : counts)
    chi2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  EXPECT_LT(chi2, 44.81);
}

}  // namespace
