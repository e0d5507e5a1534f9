#include "blur/storage/ledger.h"

#include <gtest/gtest.h>
#include <string.h>

#include "blur/storage/crc32.h"
#include "flash_write.h"
#include "ledger_format3.inc"
#include "little_endian.h"
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

// Provisioning an open ledger's storage again is refused and changes
// nothing: the ledger stays open and charges on (it once closed, and every
// later call failed with kLedgerClosed until the storage was reopened).
TEST(Ledger, ProvisioningAnOpenLedgerIsRefusedAndKeepsItOpen) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1), Status::kOk);
  const uint64_t operations = port.storage_operations();
  EXPECT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 2),
            Status::kAlreadyProvisioned);
  EXPECT_EQ(port.storage_operations(), operations);
  EXPECT_EQ(ledger.device_nonce(), 1u);
  uint64_t id = 0;
  EXPECT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);
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
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, kPolicy, 1),
            Status::kOk);
  uint8_t before[2 * SimPort::kBlockSize];
  memcpy(before, port.flash(), sizeof before);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(kNat, 1, &id), Status::kOk);
  // A bit of the last byte the charge wrote (its commit unit).
  uint32_t last = 0;
  for (uint32_t i = 0; i < sizeof before; ++i) {
    if (port.flash()[i] != before[i]) last = i;
  }
  port.flash()[last] ^= 0x01;
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

// tests/vectors/ledger_format3.hex: the two-slot format of earlier releases.
// An update to the log format keeps that budget and continues it.
TEST(Ledger, ReadsTheTwoSlotFormatOfEarlierReleases) {
  SimPort port(1);
  port.enable_counter();
  uint32_t at = 0;
  for (const char* line = kLedgerFormat3; *line != '\0';) {
    const char* end = line;
    while (*end != '\0' && *end != '\n') ++end;
    for (const char* c = line; *line != '#' && c + 1 < end; c += 2) {
      auto nibble = [](char h) { return h <= '9' ? h - '0' : h - 'a' + 10; };
      port.flash()[at++] = static_cast<uint8_t>(nibble(c[0]) << 4 | nibble(c[1]));
    }
    line = *end == '\n' ? end + 1 : end;
  }
  ASSERT_EQ(at, 2 * SimPort::kBlockSize);
  Ledger ledger;
  ASSERT_EQ(ledger.open(port.port(), SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(ledger.spent_micros(), 1850000u);
  EXPECT_EQ(ledger.next_report_id(), 3u);
  EXPECT_EQ(ledger.metric_spent_micros(7), 1600000u);
  EXPECT_EQ(ledger.metric_spent_micros(9), 250000u);
  // The record of an earlier release memoized value 3 of metric 7: read as
  // a configuration digest, it pins metric 7 to no configuration of today.
  EXPECT_TRUE(ledger.memoized(7, 3));
  EXPECT_EQ(ledger.check_memoized_config(7, 0xC0FFEE), Status::kConfigurationChanged);
  EXPECT_EQ(ledger.device_nonce(), 0x1122334455667788u);
  ASSERT_TRUE(ledger.secret() != nullptr);
  EXPECT_EQ(ledger.secret()[31], 32);
  EXPECT_EQ(port.counter(), 4u);  // completed from the record
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(100000, 9, &id), Status::kOk);
  EXPECT_EQ(id, 3u);
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), 1950000u);
  EXPECT_EQ(rebooted.metric_spent_micros(9), 350000u);
  EXPECT_TRUE(rebooted.memoized(7, 3));
  EXPECT_EQ(rebooted.charge_memoized(100000, 7, 0xC0FFEE, &id), Status::kConfigurationChanged);
  ASSERT_EQ(rebooted.charge_memoized(100000, 8, 0xC0FFEE, &id), Status::kOk);  // a new id
  Ledger again;
  ASSERT_EQ(again.open(port.port(), SimPort::kLedgerPartition), Status::kOk);
  EXPECT_TRUE(again.memoized(8, 0xC0FFEE));
  EXPECT_EQ(again.spent_micros(), 2050000u);
  EXPECT_EQ(Ledger().provision(port.port(), SimPort::kLedgerPartition, kPolicy, 1),
            Status::kAlreadyProvisioned);
}

// A snapshot of a newer format (firmware rolled back after an update) keeps
// the ledger closed and is never overwritten by provisioning.
TEST(Ledger, ANewerFormatIsRefusedAndLeftAlone) {
  SimPort port(1);
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), SimPort::kLedgerPartition, kPolicy, 1), Status::kOk);
  uint8_t* header = port.flash();
  blur::store_le32(header + 4, 5 | (~5u & 0xFFFF) << 16);  // format 5 and its complement
  uint8_t before[2 * SimPort::kBlockSize];
  memcpy(before, port.flash(), sizeof before);
  Ledger rebooted;
  EXPECT_EQ(rebooted.open(port.port(), SimPort::kLedgerPartition), Status::kStorageIncompatible);
  EXPECT_EQ(rebooted.provision(port.port(), SimPort::kLedgerPartition, kPolicy, 2),
            Status::kAlreadyProvisioned);
  EXPECT_EQ(memcmp(before, port.flash(), sizeof before), 0);
}

// Geometries the SDK cannot write correctly are refused before any write.
TEST(Ledger, RefusesBadGeometriesAndPartitions) {
  SimPort port(1);
  auto refused = [&](blur::Port p, blur::Partition partition) {
    Ledger ledger;
    const uint64_t operations = port.storage_operations();
    return ledger.open(p, partition) == Status::kInvalidArgument &&
           ledger.provision(p, partition, kPolicy, 1) == Status::kInvalidArgument &&
           port.storage_operations() == operations;
  };
  blur::Port p = port.port();
  p.prog_size = 3;  // not a power of two
  EXPECT_TRUE(refused(p, SimPort::kLedgerPartition));
  p = port.port();
  p.prog_size = 1024;  // above BLUR_MAX_PROG_SIZE
  EXPECT_TRUE(refused(p, SimPort::kLedgerPartition));
  p = port.port();
  p.erase_value = 0x55;
  EXPECT_TRUE(refused(p, SimPort::kLedgerPartition));
  p = port.port();
  EXPECT_TRUE(refused(p, blur::Partition{0, 1}));                  // one block
  EXPECT_TRUE(refused(p, blur::Partition{SimPort::kBlockCount - 1, 2}));  // past the end
  p.block_size = 256;  // a snapshot does not fit
  EXPECT_TRUE(refused(p, SimPort::kLedgerPartition));
}

// Bytes past the end of the log (an erased slot) keep the block from taking
// more entries: otherwise a CRC-valid record there would be replayed after
// the next entry. Found by ledger_storage_fuzz.
TEST(Ledger, BytesPastTheEndOfTheLogMoveItOn) {
  static uint8_t flash[2 * 1024];
  blur::flash::Config config = SimPort::default_flash_config(2);
  config.block_size = 1024;
  SimPort port(1, config, flash);
  const blur::Partition partition{0, 2};
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), partition, kPolicy, 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(1000, 1, &id), Status::kOk);  // the first entry of block 0
  // A record with a valid CRC two entry slots further on (slot 1 erased).
  const blur::Port p = port.port();
  const uint32_t span = blur::record_span(p, 40);
  const uint32_t stray = blur::record_span(p, Ledger::kSnapshotSize) + 2 * span;
  memset(port.flash() + stray, 0x11, 40);
  blur::store_le32(port.flash() + stray + 40, blur::crc32(port.flash() + stray, 40));
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), partition), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), 1000u);
  ASSERT_EQ(rebooted.charge(500, 1, &id), Status::kOk);
  EXPECT_EQ(port.flash()[1024], 0x42);  // the log moved on: block 1 starts with a snapshot
  Ledger again;
  ASSERT_EQ(again.open(port.port(), partition), Status::kOk);
  EXPECT_EQ(again.spent_micros(), 1500u);
}

// A ledger written with a monotonic counter, then opened through a port
// without one (an app that lost access to it), keeps working: its records
// carry the counter's last value instead of going back to 0, which a replay
// would refuse as a rollback of the log. Found by ledger_storage_fuzz.
TEST(Ledger, AStoreWrittenWithACounterOpensWithoutOne) {
  static uint8_t flash[2 * 1024];
  blur::flash::Config config = SimPort::default_flash_config(2);
  config.block_size = 1024;
  SimPort port(1, config, flash);
  port.enable_counter();
  const blur::Partition partition{0, 2};
  Ledger ledger;
  ASSERT_EQ(ledger.provision(port.port(), partition, kPolicy, 1), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge(1000, 1, &id), Status::kOk);
  blur::Port without = port.port();
  without.counter_read = nullptr;
  without.counter_advance = nullptr;
  Ledger rebooted;
  ASSERT_EQ(rebooted.open(without, partition), Status::kOk);
  ASSERT_EQ(rebooted.charge(500, 1, &id), Status::kOk);  // appended to the same log
  Ledger again;
  ASSERT_EQ(again.open(without, partition), Status::kOk);
  EXPECT_EQ(again.spent_micros(), 1500u);
  Ledger with_counter;
  ASSERT_EQ(with_counter.open(port.port(), partition), Status::kOk);
  EXPECT_EQ(with_counter.spent_micros(), 1500u);
}

}  // namespace
