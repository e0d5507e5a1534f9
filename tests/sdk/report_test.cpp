#include "blur/report/report.h"

#include <gtest/gtest.h>

#include "blur/mechanisms/binary_randomized_response.h"
#include "sim_port.h"

namespace {

using blur::Status;

struct Device {
  explicit Device(uint64_t seed) : port(seed) {}
  blur::sim::SimPort port;
  blur::Ledger ledger;
  blur::Rng rng;
};

TEST(Report, ChargesTheLedgerBeforeTheReportExists) {
  Device device(7);
  ASSERT_EQ(device.rng.seed(device.port.port(), nullptr, 0), Status::kOk);
  ASSERT_EQ(device.ledger.provision(device.port.port(), blur::sim::SimPort::kLedgerPartition, {3 * blur::kEpsilonMicrosPerNat}, 9),
            Status::kOk);
  const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
  ASSERT_TRUE(rr.ok());
  blur::Report report{};
  ASSERT_EQ(blur::make_report(device.ledger, device.rng, rr.value(), 5, true, &report),
            Status::kOk);
  EXPECT_EQ(report.report_id, 0u);
  EXPECT_EQ(report.metric_id, 5u);
  EXPECT_EQ(report.epsilon_micros, blur::kEpsilonMicrosPerNat);
  EXPECT_EQ(report.domain_size, 2u);
  EXPECT_EQ(device.ledger.spent_micros(), blur::kEpsilonMicrosPerNat);
  // The charge is on flash, not just in memory.
  blur::Ledger rebooted;
  ASSERT_EQ(rebooted.open(device.port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), blur::kEpsilonMicrosPerNat);
}

TEST(Report, NoReportWhenTheBudgetIsExhausted) {
  Device device(7);
  ASSERT_EQ(device.rng.seed(device.port.port(), nullptr, 0), Status::kOk);
  ASSERT_EQ(device.ledger.provision(device.port.port(), blur::sim::SimPort::kLedgerPartition, {blur::kEpsilonMicrosPerNat}, 9),
            Status::kOk);
  const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
  ASSERT_TRUE(rr.ok());
  blur::Report report{};
  ASSERT_EQ(blur::make_report(device.ledger, device.rng, rr.value(), 1, true, &report),
            Status::kOk);
  blur::Report untouched{};
  untouched.metric_id = 12345;
  EXPECT_EQ(blur::make_report(device.ledger, device.rng, rr.value(), 1, true, &untouched),
            Status::kBudgetExhausted);
  EXPECT_EQ(untouched.metric_id, 12345u);
}

TEST(Report, NoChargeAndNoReportWithoutEntropy) {
  Device device(7);
  device.port.fail_entropy_after(0);
  EXPECT_EQ(device.rng.seed(device.port.port(), nullptr, 0), Status::kEntropyFailure);
  ASSERT_EQ(device.ledger.provision(device.port.port(), blur::sim::SimPort::kLedgerPartition, {blur::kEpsilonMicrosPerNat}, 9),
            Status::kOk);
  const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
  ASSERT_TRUE(rr.ok());
  blur::Report report{};
  EXPECT_EQ(blur::make_report(device.ledger, device.rng, rr.value(), 1, true, &report),
            Status::kEntropyFailure);
  EXPECT_EQ(device.ledger.spent_micros(), 0u);
}

TEST(Report, ClosedLedgerMeansNoReport) {
  Device device(7);
  ASSERT_EQ(device.rng.seed(device.port.port(), nullptr, 0), Status::kOk);
  EXPECT_EQ(device.ledger.open(device.port.port(), blur::sim::SimPort::kLedgerPartition), Status::kNotProvisioned);
  const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
  ASSERT_TRUE(rr.ok());
  blur::Report report{};
  EXPECT_EQ(blur::make_report(device.ledger, device.rng, rr.value(), 1, true, &report),
            Status::kLedgerClosed);
}

}  // namespace
