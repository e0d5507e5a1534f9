// The one-run audit's epsilon lower bound (Steinke, Nasr, Jagielski 2023,
// Theorem 3.2 with its delta term; epsilon_lower_bound.h) against values of
// the same formula computed independently in Python with exact binomial
// coefficients (math.comb), and its edge cases.
#include "trainer/audit/epsilon_lower_bound.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using namespace blur::trainer;

TEST(OneRunAudit, PValueMatchesTheFormula) {
  EXPECT_NEAR(one_run_audit_p_value(1000, 100, 80, 1.0, 1e-5), 0.07300911594917775, 1e-12);
  // delta = 0: the plain Binomial(v, e^eps / (1 + e^eps)) tail; at eps 0, P[Bin(2, 1/2) >= 1].
  EXPECT_NEAR(one_run_audit_p_value(10, 2, 1, 0.0, 0.0), 0.75, 1e-15);
}

TEST(OneRunAudit, LowerBoundMatchesTheFormula) {
  EXPECT_NEAR(one_run_epsilon_lower_bound(1000, 600, 600, 1e-5, 0.95), 5.270399463514697, 1e-5);
  EXPECT_NEAR(one_run_epsilon_lower_bound(1000, 200, 199, 1e-5, 0.95), 3.7109596341469575, 1e-5);
  EXPECT_NEAR(one_run_epsilon_lower_bound(1000, 400, 395, 1e-5, 0.999), 2.9706127599248524, 1e-5);
}

TEST(OneRunAudit, ChanceLevelGuessesGiveZero) {
  EXPECT_EQ(one_run_epsilon_lower_bound(1000, 400, 215, 1e-5, 0.999), 0.0);
  EXPECT_EQ(one_run_epsilon_lower_bound(1000, 400, 200, 1e-5, 0.95), 0.0);
  EXPECT_THROW(one_run_audit_p_value(10, 5, 6, 1.0, 0.0), std::invalid_argument);
}

}  // namespace
