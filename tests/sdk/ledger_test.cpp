#include "blur/ledger.h"

#include <gtest/gtest.h>

#include "sim_port.h"

namespace {

using blur::Ledger;
using blur::LedgerPolicy;
using blur::Status;
using blur::sim::SimPort;

constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;
constexpr LedgerPolicy kPolicy{5 * kNat / 2};  // 2.5 nats for life

TEST(Ledger, BlankStorageIsNotProvisionedAndChargesNothing) {
  SimPort port(1);
  Ledger ledger;
  EXPECT_EQ(ledger.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kNotProvisioned);
  uint64_t id = 0;
  EXPECT_EQ(ledger.charge(1, 1, &id), Status::kLedgerClosed);
  EXPECT_EQ(ledger.remaining_micros(), 0u);
}

TEST(Ledger, ProvisionOnceThenStateSurvivesReopen) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 0xABCDEF), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);
  EXPECT_EQ(id, 0u);
  ASSERT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);
  EXPECT_EQ(id, 1u);

  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), 2 * kNat);
  EXPECT_EQ(rebooted.remaining_micros(), kNat / 2);
  EXPECT_EQ(rebooted.device_nonce(), 0xABCDEFu);
  ASSERT_EQ(rebooted.charge(1, 1, &id), Status::kOk);
  EXPECT_EQ(id, 2u);  // ids continue across reboots

  Ledger again;
  EXPECT_EQ(again.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1), Status::kAlreadyProvisioned);
}

TEST(Ledger, RefusesChargesBeyondTheCapAndChangesNothing) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(2 * kNat, 1, &id), Status::kOk);
  const uint64_t operations = port.storage_operations();
  EXPECT_EQ(ledger.charge(kNat, 1, &id), Status::kBudgetExhausted);
  EXPECT_EQ(port.storage_operations(), operations);  // nothing written
  EXPECT_EQ(ledger.spent_micros(), 2 * kNat);
  EXPECT_EQ(ledger.charge(kNat / 2, 1, &id), Status::kOk);  // exactly to the cap
  EXPECT_EQ(ledger.remaining_micros(), 0u);
  EXPECT_EQ(ledger.charge(1, 1, &id), Status::kBudgetExhausted);
}

TEST(Ledger, CorruptNewestRecordFallsBackToThePreviousOne) {
  SimPort port(1);
  Ledger ledger;
  // (512-byte blocks hold one snapshot and no entry: every record starts
  // the next block.)
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1),
            Status::kOk);  // sequence 1, block 0
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);  // sequence 2, block 1
  port.flash()[1 * SimPort::kBlockSize + 37] ^= 0x01;   // a bit of its spent total
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), 0u);  // the record before the charge
  // (The lost charge's report never existed: charge() returns only after a
  // read-back, and the report is made after that.)
}

TEST(Ledger, NoValidRecordKeepsTheLedgerClosed) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);
  port.flash()[0 * SimPort::kBlockSize + 50] ^= 0x80;  // CRC of slot 0
  port.flash()[1 * SimPort::kBlockSize + 0] ^= 0x80;   // magic of slot 1
  Ledger rebooted;
  EXPECT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kStorageCorrupt);
  EXPECT_EQ(rebooted.charge(1, 1, &id), Status::kLedgerClosed);
  // Starting over is an explicit act.
  EXPECT_EQ(rebooted.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 2), Status::kOk);
}

// Storage failing at the k-th operation of a charge: the call reports it,
// the ledger closes, and after a reboot the spent total is either the old
// or the new one, never less, and report ids never repeat.
TEST(Ledger, StorageFailureDuringAChargeClosesTheLedger) {
  for (uint64_t k = 0; k < 4; ++k) {
    SimPort port(1);
    Ledger ledger;
    ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1), Status::kOk);
    uint64_t id = 0;
    ASSERT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);
    port.fail_storage_after(k);
    EXPECT_EQ(ledger.charge(kNat, 1, &id), Status::kStorageFailure);
    EXPECT_FALSE(ledger.is_open());
    EXPECT_EQ(ledger.charge(1, 1, &id), Status::kLedgerClosed);
    port.fail_storage_after(SimPort::kNever);
    Ledger rebooted;
    ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
    EXPECT_GE(rebooted.spent_micros(), kNat);
    ASSERT_EQ(rebooted.charge(1, 1, &id), Status::kOk);
    EXPECT_GE(id, 1u);
  }
}

TEST(Ledger, RejectsPortsTooSmallForTwoSlots) {
  SimPort port(1);
  blur::Port small = port.port();
  small.block_count = 1;
  Ledger ledger;
  EXPECT_EQ(ledger.open(small, blur::sim::SimPort::kLedgerPartition), Status::kInvalidArgument);
  EXPECT_EQ(ledger.provision(small, blur::sim::SimPort::kLedgerPartition, kPolicy, 1), Status::kInvalidArgument);
}

}  // namespace
