// libFuzzer: the ledger reads its record from flash, which may hold
// anything (corruption, an attacker's image). Opening must never crash, and
// must either fail closed or yield a ledger whose spent total is within its
// cap, that can only grow, and whose charge is what a reopening reads.
//
// Input: one byte of flags, then bytes for the flash. Flag bit 2: the bytes
// are XORed onto the image of a real provisioned and charged ledger (both
// slots valid), so mutations start from records that open, instead of
// having to invent a whole record; else they are the image itself, the rest
// erased. Bit s (0, 1): slot s gets a correct CRC, so the checks behind the
// CRC (magic, format, policy, totals within caps) are fuzzed too: a forged
// record with a valid CRC is the attacker's image the ledger must refuse.
// Bit 3: the port has a monotonic counter (at 0).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "blur/ledger.h"
#include "crc32.h"
#include "little_endian.h"
#include "sim_port.h"

namespace {

using blur::sim::SimPort;
constexpr size_t kFlashSize = SimPort::kBlockSize * SimPort::kBlockCount;
constexpr uint64_t kNow = 1000000;

// The flash of a ledger provisioned with a window, two metric caps and a
// secret, then charged three times.
const uint8_t* valid_image() {
  static uint8_t image[kFlashSize];
  static const bool made = [] {
    SimPort port(7);
    port.set_time(kNow);
    blur::LedgerPolicy policy;
    policy.lifetime_cap_micros = 50000000;
    policy.window_seconds = 86400;
    policy.window_allowance_micros = 10000000;
    policy.metric_caps[0] = {1, 5000000};
    policy.metric_caps[1] = {2, 3000000};
    policy.metric_cap_count = 2;
    uint8_t secret[blur::kLedgerSecretSize];
    std::memset(secret, 0x5a, sizeof secret);
    blur::Ledger ledger;
    if (ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, policy, 42, secret) != blur::Status::kOk) __builtin_trap();
    uint64_t id = 0;
    for (const uint32_t metric : {1u, 2u, 1u}) {
      if (ledger.charge(250000, metric, &id) != blur::Status::kOk) __builtin_trap();
    }
    std::memcpy(image, port.flash(), kFlashSize);
    return true;
  }();
  (void)made;
  return image;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  ++data;
  --size;
  const size_t used = size < kFlashSize ? size : kFlashSize;
  SimPort port(1);
  port.set_time(kNow + 3600);
  if (flags & 8) port.enable_counter();
  if (flags & 4) {
    std::memcpy(port.flash(), valid_image(), kFlashSize);
    for (size_t i = 0; i < used; ++i) port.flash()[i] ^= data[i];
  } else {
    std::memcpy(port.flash(), data, used);
  }
  // The snapshot's commit unit follows its body (byte-programmable flash).
  constexpr uint32_t kCrcOffset = blur::Ledger::kSnapshotSize;
  for (uint32_t slot = 0; slot < 2; ++slot) {
    if ((flags >> slot & 1) == 0) continue;
    uint8_t* record = port.flash() + slot * SimPort::kBlockSize;
    blur::store_le32(record + kCrcOffset, blur::crc32(record, kCrcOffset));
  }

  blur::Ledger ledger;
  if (ledger.open(port.port(), blur::sim::SimPort::kLedgerPartition) != blur::Status::kOk) {
    if (ledger.is_open()) __builtin_trap();
    return 0;
  }
  if (ledger.spent_micros() > ledger.lifetime_cap_micros()) __builtin_trap();
  const uint64_t spent = ledger.spent_micros();
  uint64_t id = 0;
  if (ledger.charge(1, 1, &id) != blur::Status::kOk) return 0;
  if (ledger.spent_micros() != spent + 1) __builtin_trap();
  // The charge is durable: the flash now opens to the new total.
  blur::Ledger reopened;
  if (reopened.open(port.port(), blur::sim::SimPort::kLedgerPartition) != blur::Status::kOk || reopened.spent_micros() != spent + 1)
    __builtin_trap();
  return 0;
}
