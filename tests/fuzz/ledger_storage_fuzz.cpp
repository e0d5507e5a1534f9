// libFuzzer: the ledger reads its log from flash, which may hold anything
// (corruption, an attacker's image). Opening must never crash, and must
// either fail closed or yield a ledger whose spent total is within its cap,
// that can only grow, and whose charge is what a reopening reads.
//
// Flash: 1 KiB blocks, so a block holds a snapshot and several entries.
// Input: one byte of flags, then bytes for the flash. Flag bit 2: the bytes
// are XORed onto the image of a real provisioned and charged ledger (a
// snapshot and entries in one block, an older snapshot in the other), so
// mutations start from records that open, instead of having to invent a
// whole log; else they are the image itself, the rest erased. Bit 0: every
// snapshot gets a correct CRC; bit 1: every entry slot that is not erased
// does, so the checks behind the CRC (magic, format, capacities, policy,
// the replayed arithmetic) are fuzzed too: a forged record with a valid CRC
// is the attacker's image the ledger must refuse. Bit 3: the port has a
// monotonic counter (at 0). Bit 4: the flash programs 8-byte units.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>

#include "blur/storage/crc32.h"
#include "blur/storage/ledger.h"
#include "flash_write.h"
#include "little_endian.h"
#include "sim_port.h"

namespace {

using blur::sim::SimPort;
constexpr uint32_t kBlockSize = 1024;
constexpr uint32_t kBlocks = 2;
constexpr size_t kFlashSize = kBlockSize * kBlocks;
constexpr uint64_t kNow = 1000000;
constexpr uint32_t kEntryBody = 40;

blur::flash::Config config(uint32_t prog_size) {
  blur::flash::Config c = SimPort::default_flash_config(kBlocks);
  c.block_size = kBlockSize;
  c.prog_size = prog_size;
  return c;
}

// The flash of a ledger provisioned with a window, two metric caps and a
// secret, then charged enough times to fill one block and move on.
const uint8_t* valid_image(uint32_t prog_size) {
  static uint8_t images[2][kFlashSize];
  static bool made[2] = {false, false};
  const int which = prog_size == 1 ? 0 : 1;
  if (!made[which]) {
    static uint8_t flash[kFlashSize];
    SimPort port(7, config(prog_size), flash);
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
    if (ledger.provision(port.port(), blur::Partition{0, kBlocks}, policy, 42, secret) !=
        blur::Status::kOk)
      __builtin_trap();
    uint64_t id = 0;
    for (int i = 0; i < 16; ++i) {
      if (ledger.charge(25000, 1 + i % 3, &id) != blur::Status::kOk) __builtin_trap();
    }
    std::memcpy(images[which], port.flash(), kFlashSize);
    made[which] = true;
  }
  return images[which];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  ++data;
  --size;
  const uint32_t prog_size = (flags & 16) ? 8 : 1;
  const size_t used = size < kFlashSize ? size : kFlashSize;
  static uint8_t flash[kFlashSize];
  alignas(SimPort) static uint8_t port_storage[sizeof(SimPort)];
  SimPort& port = *new (port_storage) SimPort(1, config(prog_size), flash);
  port.set_time(kNow + 3600);
  if (flags & 8) port.enable_counter();
  if (flags & 4) {
    std::memcpy(port.flash(), valid_image(prog_size), kFlashSize);
    for (size_t i = 0; i < used; ++i) port.flash()[i] ^= data[i];
  } else {
    std::memcpy(port.flash(), data, used);
  }
  const blur::Port geometry = port.port();
  const uint32_t snapshot_crc = blur::unit_align(geometry, blur::Ledger::kSnapshotSize);
  const uint32_t first_entry = blur::record_span(geometry, blur::Ledger::kSnapshotSize);
  const uint32_t entry_span = blur::record_span(geometry, kEntryBody);
  for (uint32_t b = 0; b < kBlocks; ++b) {
    uint8_t* block = port.flash() + b * kBlockSize;
    if (flags & 1) blur::store_le32(block + snapshot_crc, blur::crc32(block, snapshot_crc));
    if ((flags & 2) == 0) continue;
    for (uint32_t at = first_entry; at + entry_span <= kBlockSize; at += entry_span) {
      if (blur::is_erased(block + at, entry_span, 0xFF)) break;
      blur::store_le32(block + at + blur::unit_align(geometry, kEntryBody),
                       blur::crc32(block + at, kEntryBody));
    }
  }

  blur::Ledger ledger;
  if (ledger.open(port.port(), blur::Partition{0, kBlocks}) != blur::Status::kOk) {
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
  if (reopened.open(port.port(), blur::Partition{0, kBlocks}) != blur::Status::kOk ||
      reopened.spent_micros() != spent + 1)
    __builtin_trap();
  return 0;
}
