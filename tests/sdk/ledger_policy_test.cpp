// The ledger's caps (lifetime, window, metric), its clock and counter rules.
#include <gtest/gtest.h>
#include <string.h>

#include "blur/storage/ledger.h"
#include "sim_port.h"

namespace {

using blur::Ledger;
using blur::LedgerPolicy;
using blur::Status;
using blur::sim::SimPort;

constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;
constexpr uint64_t kDay = 86400;

LedgerPolicy daily_policy() {
  LedgerPolicy policy;
  policy.lifetime_cap_micros = 10 * kNat;
  policy.window_seconds = kDay;
  policy.window_allowance_micros = kNat;
  policy.metric_caps[0] = {5, kNat / 2};
  policy.metric_caps[1] = {6, 3 * kNat};
  policy.metric_cap_count = 2;
  return policy;
}

TEST(LedgerPolicy, WindowAllowanceRefillsOnlyWhenTheWindowEnds) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(6 * kNat / 10, 7, &id), Status::kOk);
  const uint64_t operations = port.storage_operations();
  EXPECT_EQ(ledger.charge(6 * kNat / 10, 7, &id), Status::kWindowBudgetExhausted);
  EXPECT_EQ(ledger.check(6 * kNat / 10, 7), Status::kWindowBudgetExhausted);
  EXPECT_EQ(port.storage_operations(), operations);  // refused: nothing written
  port.advance_time(kDay - 1);
  EXPECT_EQ(ledger.charge(6 * kNat / 10, 7, &id), Status::kWindowBudgetExhausted);
  port.advance_time(1);  // the next window
  ASSERT_EQ(ledger.charge(6 * kNat / 10, 7, &id), Status::kOk);
  EXPECT_EQ(ledger.window_spent_micros(), 6 * kNat / 10);
  // A clock set back never refills: still the same window's allowance.
  port.set_time(1000);
  EXPECT_EQ(ledger.charge(6 * kNat / 10, 7, &id), Status::kWindowBudgetExhausted);
  ASSERT_EQ(ledger.charge(4 * kNat / 10, 7, &id), Status::kOk);
  // Windows are back to back from provisioning: 3.5 days later is window 3.
  port.set_time(1700000000 + 7 * kDay / 2);
  ASSERT_EQ(ledger.charge(kNat, 7, &id), Status::kOk);
  EXPECT_EQ(ledger.window_start(), 1700000000 + 3 * kDay);
  // The window survives a reboot.
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.window_spent_micros(), kNat);
  EXPECT_EQ(rebooted.charge(1, 7, &id), Status::kWindowBudgetExhausted);
}

TEST(LedgerPolicy, MetricCapsAreSeparateAndPersist) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(4 * kNat / 10, 5, &id), Status::kOk);
  EXPECT_EQ(ledger.charge(2 * kNat / 10, 5, &id), Status::kMetricBudgetExhausted);
  ASSERT_EQ(ledger.charge(2 * kNat / 10, 6, &id), Status::kOk);  // another metric
  ASSERT_EQ(ledger.charge(kNat / 10, 5, &id), Status::kOk);      // exactly to metric 5's cap
  EXPECT_EQ(ledger.metric_spent_micros(5), kNat / 2);
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.metric_spent_micros(5), kNat / 2);
  EXPECT_EQ(rebooted.metric_spent_micros(6), 2 * kNat / 10);
  EXPECT_EQ(rebooted.metric_spent_micros(7), 0u);
  EXPECT_EQ(rebooted.spent_micros(), 7 * kNat / 10);
  EXPECT_EQ(rebooted.charge(1, 5, &id), Status::kMetricBudgetExhausted);
}

// Caps are checked lifetime first, then window, then metric.
TEST(LedgerPolicy, TheStatusNamesTheFirstCapThatWouldBreak) {
  SimPort port(1);
  Ledger ledger;
  LedgerPolicy policy = daily_policy();
  policy.lifetime_cap_micros = kNat / 4;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, policy, 1), Status::kOk);
  EXPECT_EQ(ledger.check(kNat, 5), Status::kBudgetExhausted);
  policy.lifetime_cap_micros = 10 * kNat;
  SimPort port2(1);
  ASSERT_EQ(ledger.provision(port2.port(), blur::sim::SimPort::kLedgerPartition, policy, 1), Status::kOk);
  EXPECT_EQ(ledger.check(2 * kNat, 5), Status::kWindowBudgetExhausted);
  EXPECT_EQ(ledger.check(kNat, 5), Status::kMetricBudgetExhausted);
  EXPECT_EQ(ledger.check(kNat, 6), Status::kOk);
}

TEST(LedgerPolicy, ClockFailureFailsClosed) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kOk);
  port.fail_clock(true);
  uint64_t id = 0;
  EXPECT_EQ(ledger.charge(1, 7, &id), Status::kClockFailure);
  EXPECT_EQ(ledger.spent_micros(), 0u);
  port.fail_clock(false);
  EXPECT_EQ(ledger.charge(1, 7, &id), Status::kOk);
  // A window policy needs a clock at all.
  SimPort other(2);
  blur::Port no_clock = other.port();
  no_clock.now = nullptr;
  EXPECT_EQ(Ledger().provision(no_clock, blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kInvalidArgument);
}

TEST(LedgerPolicy, InvalidPoliciesAreRefused) {
  SimPort port(1);
  Ledger ledger;
  LedgerPolicy zero;
  EXPECT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, zero, 1), Status::kInvalidArgument);
  LedgerPolicy no_allowance = daily_policy();
  no_allowance.window_allowance_micros = 0;
  EXPECT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, no_allowance, 1), Status::kInvalidArgument);
  LedgerPolicy repeated = daily_policy();
  repeated.metric_caps[1].metric_id = 5;
  EXPECT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, repeated, 1), Status::kInvalidArgument);
  LedgerPolicy zero_cap = daily_policy();
  zero_cap.metric_caps[0].cap_micros = 0;
  EXPECT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, zero_cap, 1), Status::kInvalidArgument);
  LedgerPolicy too_many = daily_policy();
  too_many.metric_cap_count = blur::kMaxLedgerMetrics + 1;
  EXPECT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, too_many, 1), Status::kInvalidArgument);
  EXPECT_EQ(ledger.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kNotProvisioned);  // nothing was written
}

// With a monotonic counter, an older flash image (a restored backup) is
// refused instead of restoring the old budget.
TEST(LedgerPolicy, MonotonicCounterRefusesARolledBackImage) {
  SimPort port(1);
  port.enable_counter();
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(kNat / 2, 7, &id), Status::kOk);
  static uint8_t image[SimPort::kBlockSize * SimPort::kBlockCount];
  memcpy(image, port.flash(), sizeof image);  // the "backup"
  ASSERT_EQ(ledger.charge(kNat / 2, 7, &id), Status::kOk);
  EXPECT_EQ(port.counter(), 3u);  // provision + 2 charges
  memcpy(port.flash(), image, sizeof image);
  Ledger rebooted;
  EXPECT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kStorageRollback);
  EXPECT_EQ(rebooted.charge(1, 7, &id), Status::kLedgerClosed);
}

// Power cut after the record is durable but before the counter moved: the
// next open() completes the counter instead of calling it a rollback.
TEST(LedgerPolicy, InterruptedCounterAdvanceIsCompletedAtOpen) {
  SimPort port(1);
  port.enable_counter();
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kOk);
  blur::Port port_without_advance = port.port();
  port_without_advance.counter_advance = [](void*, uint64_t) { return Status::kStorageFailure; };
  Ledger interrupted;
  ASSERT_EQ(interrupted.open(port_without_advance, blur::sim::SimPort::kLedgerPartition), Status::kOk);
  uint64_t id = 0;
  EXPECT_EQ(interrupted.charge(kNat / 2, 7, &id), Status::kStorageFailure);
  EXPECT_EQ(port.counter(), 1u);
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), kNat / 2);  // the durable charge counts
  EXPECT_EQ(port.counter(), 2u);
}

// Found by ledger_storage_fuzz: a record whose counter is at its last value
// (forged or corrupt, with a valid CRC) made the next charge write counter 0
// and report success; the next open() then refused it as a rollback.
TEST(LedgerPolicy, CounterAtItsLastValueRefusesToWrapAround) {
  SimPort port(1);
  port.enable_counter();
  const blur::Port p = port.port();
  ASSERT_EQ(p.counter_advance(p.context, UINT64_MAX - 1), Status::kOk);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(p, blur::sim::SimPort::kLedgerPartition, daily_policy(), 1), Status::kOk);  // takes the last value
  EXPECT_EQ(port.counter(), UINT64_MAX);
  uint64_t id = 0;
  EXPECT_EQ(ledger.charge(kNat / 2, 7, &id), Status::kStorageFailure);
  EXPECT_FALSE(ledger.is_open());
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(p, blur::sim::SimPort::kLedgerPartition), Status::kOk);  // the last durable record, not a "rollback"
  EXPECT_EQ(rebooted.spent_micros(), 0u);
  EXPECT_EQ(rebooted.charge(kNat / 2, 7, &id), Status::kStorageFailure);
}

}  // namespace
