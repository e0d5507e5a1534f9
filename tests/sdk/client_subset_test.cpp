// A Client built with some mechanisms only (blur_client_library MECHANISMS
// rr grr NO_MEMOIZATION): the others are refused with kNotBuilt, before
// anything is stored or spent, and the built ones work.
#include <gtest/gtest.h>

#include "blur/compat/std_facilities.h"

#include "blur/client.h"
#include "sim_port.h"

namespace {

using blur::MechanismId;
using blur::Status;

constexpr uint32_t kNat = blur::kEpsilonMicrosPerNat;

static_assert(blur::mechanism_built(MechanismId::kBinaryRandomizedResponse), "rr is built");
static_assert(!blur::mechanism_built(MechanismId::kRappor), "rappor is left out");
static_assert(!blur::kMemoizationBuilt, "memoization is left out");

TEST(ClientSubset, LeftOutMechanismsAreRefusedAndBuiltOnesReport) {
  blur::sim::SimPort port(5);
  static blur::Client client;
  new (&client) blur::Client();
  ASSERT_EQ(client.open(port.port()), Status::kNotProvisioned);
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 10 * uint64_t{kNat};
  ASSERT_EQ(client.provision(policy), Status::kOk);

  const MechanismId left_out[] = {
      MechanismId::kSymmetricUnaryEncoding, MechanismId::kOptimizedUnaryEncoding,
      MechanismId::kDiscreteLaplace,        MechanismId::kOneBitMean,
      MechanismId::kHadamardResponse,       MechanismId::kOptimizedLocalHashing,
      MechanismId::kBinaryLocalHashing,     MechanismId::kRappor,
      MechanismId::kPrefixExtension,        MechanismId::kSequenceFragmentPuzzle};
  uint32_t id = 10;
  for (MechanismId mechanism : left_out) {
    EXPECT_EQ(client.add_metric(id++, mechanism, kNat, 16), Status::kNotBuilt);
  }
  EXPECT_EQ(client.add_metric(id++, MechanismId::kRappor, kNat, 16, 2 * kNat), Status::kNotBuilt);
  EXPECT_EQ(client.add_metric(id++, static_cast<MechanismId>(blur::kMechanismCount + 1), kNat, 16),
            Status::kInvalidArgument);                        // not a mechanism at all
  EXPECT_EQ(client.record(10, 1), Status::kInvalidArgument);  // nothing was added

  ASSERT_EQ(client.add_metric(1, MechanismId::kBinaryRandomizedResponse, kNat, 2), Status::kOk);
  ASSERT_EQ(client.add_metric(2, MechanismId::kGeneralizedRandomizedResponse, kNat, 8),
            Status::kOk);
  ASSERT_EQ(client.record(1, 1), Status::kOk);
  ASSERT_EQ(client.record(2, 7), Status::kOk);
  EXPECT_EQ(client.ledger().spent_micros(), 2u * kNat);
  EXPECT_EQ(client.queue().pending_count(), 2u);
}

}  // namespace
