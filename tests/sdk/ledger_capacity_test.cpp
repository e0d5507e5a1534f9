// A firmware update that changes the ledger's capacities keeps the budget.
// This file is built three times, with BLUR_LEDGER_MAX_METRICS /
// BLUR_LEDGER_MAX_MEMO_VALUES of 2/4, 8/16 (the defaults) and 12/24, and
// ctest chains the builds over one storage file (tests/CMakeLists.txt):
//
//   ledger_capacity_<build> write FILE CAPS MEMOS  provision CAPS metric caps, charge
//                                                   each, record MEMOS memoized metrics
//   ledger_capacity_<build> continue FILE CAPS MEMOS UPDATES
//                                                   open (a record written by another
//                                                   build and continued by UPDATES
//                                                   others), check every total, charge
//                                                   kUpdateCharges times (enough to fill
//                                                   a block: the log moves on and the
//                                                   new snapshot has this build's
//                                                   capacities), reopen, check again
//   ledger_capacity_<build> refuse FILE             open is kStorageIncompatible,
//                                                   provision kAlreadyProvisioned, and
//                                                   the file is byte for byte unchanged
//
// Exit status 0 when every check holds; each failure is printed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "blur/storage/ledger.h"
#include "posix_port.h"

namespace {

using blur::Status;

constexpr uint64_t kCap = 1000000;
constexpr uint32_t kBlockSize = 4096;
constexpr uint32_t kBlocks = 2;
constexpr blur::Partition kPartition{0, kBlocks};
constexpr uint32_t kUpdateCharges = 64;  // 1 micro each, to metric 1
constexpr uint32_t kMemoMetrics = 1000;  // memoized metrics 1000.. (digest 7 + i), 30 micros each
int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s (build with %u metric caps, %u memo values)\n", what,
            blur::kMaxLedgerMetrics, blur::kMaxMemoValues);
    ++failures;
  }
}

// What the writer did: metric i + 1 charged 1000 + i micros, then MEMOS
// memoized metrics' first reports (30 micros each).
uint64_t expected_spent(uint32_t caps, uint32_t memos) {
  uint64_t total = 0;
  for (uint32_t i = 0; i < caps; ++i) total += 1000 + i;
  return total + memos * 30;
}

std::vector<uint8_t> read_file(const char* path) {
  std::vector<uint8_t> bytes;
  FILE* f = fopen(path, "rb");
  if (f == nullptr) return bytes;
  uint8_t chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  fclose(f);
  return bytes;
}

void write(const char* path, uint32_t caps, uint32_t memos) {
  remove(path);
  blur::posix::PosixPort posix;
  check(posix.open(path, kBlockSize, kBlocks) == Status::kOk, "open the storage file");
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 1000 * kCap;
  for (uint32_t i = 0; i < caps; ++i) policy.metric_caps[i] = {i + 1, kCap};
  policy.metric_cap_count = caps;
  uint8_t secret[blur::kLedgerSecretSize];
  memset(secret, 0xA5, sizeof secret);
  blur::Ledger ledger;
  check(ledger.provision(posix.port(), kPartition, policy, 77, secret) == Status::kOk, "provision");
  uint64_t id = 0;
  for (uint32_t i = 0; i < caps; ++i) check(ledger.charge(1000 + i, i + 1, &id) == Status::kOk, "charge");
  for (uint32_t v = 0; v < memos; ++v) {
    check(ledger.charge_memoized(30, kMemoMetrics + v, 7 + v, &id) == Status::kOk,
          "record a memoized metric");
  }
  check(ledger.spent_micros() == expected_spent(caps, memos), "the writer's total");
}

// After the writer and `updates` updates of kUpdateCharges charges each.
void expect_state(blur::Ledger& ledger, uint32_t caps, uint32_t memos, uint32_t updates) {
  const uint64_t extra = kUpdateCharges * updates;
  check(ledger.spent_micros() == expected_spent(caps, memos) + extra, "spent total carried over");
  check(ledger.device_nonce() == 77, "device nonce carried over");
  check(ledger.policy().metric_cap_count == caps, "metric caps carried over");
  check(ledger.next_report_id() == caps + memos + extra, "report ids carried over");
  for (uint32_t i = 0; i < caps; ++i) {
    const uint64_t metric_extra = i == 0 ? extra : 0;
    check(ledger.metric_spent_micros(i + 1) == 1000 + i + metric_extra, "metric total carried over");
  }
  for (uint32_t v = 0; v < memos; ++v) {
    check(ledger.memoized(kMemoMetrics + v, 7 + v), "memoized metric carried over");
  }
  check(ledger.secret() != nullptr && ledger.secret()[0] == 0xA5, "device secret carried over");
}

void continue_ledger(const char* path, uint32_t caps, uint32_t memos, uint32_t updates) {
  {
    blur::posix::PosixPort posix;
    check(posix.open(path, kBlockSize, kBlocks) == Status::kOk, "open the storage file");
    blur::Ledger ledger;
    check(ledger.open(posix.port(), kPartition) == Status::kOk, "open a record of another build");
    if (!ledger.is_open()) return;
    expect_state(ledger, caps, memos, updates);
    for (uint32_t i = 0; i < kUpdateCharges; ++i) {
      uint64_t id = 0;
      check(ledger.charge(1, 1, &id) == Status::kOk, "charge after the update");
      check(id == caps + memos + kUpdateCharges * updates + i, "the next report id");
    }
  }
  blur::posix::PosixPort posix;
  check(posix.open(path, kBlockSize, kBlocks) == Status::kOk, "reopen the storage file");
  blur::Ledger ledger;
  check(ledger.open(posix.port(), kPartition) == Status::kOk, "reopen after the charge");
  if (ledger.is_open()) expect_state(ledger, caps, memos, updates + 1);
}

void refuse(const char* path) {
  const std::vector<uint8_t> before = read_file(path);
  check(before.size() == kBlockSize * kBlocks, "the storage file exists");
  {
    blur::posix::PosixPort posix;
    check(posix.open(path, kBlockSize, kBlocks) == Status::kOk, "open the storage file");
    blur::Ledger ledger;
    check(ledger.open(posix.port(), kPartition) == Status::kStorageIncompatible,
          "a record larger than this build is refused");
    check(!ledger.is_open(), "the ledger stays closed");
    blur::LedgerPolicy policy;
    policy.lifetime_cap_micros = kCap;
    check(ledger.provision(posix.port(), kPartition, policy, 1) == Status::kAlreadyProvisioned,
          "provision over it is refused");
  }
  check(read_file(path) == before, "the stored record is untouched");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s write|continue|refuse FILE [CAPS MEMOS [UPDATES]]\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  const char* path = argv[2];
  const uint32_t caps = argc > 3 ? static_cast<uint32_t>(atoi(argv[3])) : 0;
  const uint32_t memos = argc > 4 ? static_cast<uint32_t>(atoi(argv[4])) : 0;
  const uint32_t updates = argc > 5 ? static_cast<uint32_t>(atoi(argv[5])) : 0;
  if (strcmp(mode, "write") == 0) {
    write(path, caps, memos);
  } else if (strcmp(mode, "continue") == 0) {
    continue_ledger(path, caps, memos, updates);
  } else if (strcmp(mode, "refuse") == 0) {
    refuse(path);
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  if (failures == 0) printf("%s %s: every check holds\n", argv[0], mode);
  return failures == 0 ? 0 : 1;
}
