// libFuzzer: the ledger reads its record from flash, which may hold
// anything (corruption, an attacker's image). Opening must never crash, and
// must either fail closed or yield a ledger whose spent total is within its
// cap and that can only grow.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "blur/ledger.h"
#include "sim_port.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  blur::sim::SimPort port(1);
  const size_t flash_size = blur::sim::SimPort::kBlockSize * blur::sim::SimPort::kBlockCount;
  std::memcpy(port.flash(), data, size < flash_size ? size : flash_size);
  blur::Ledger ledger;
  if (ledger.open(port.port()) != blur::Status::kOk) {
    if (ledger.is_open()) __builtin_trap();
    return 0;
  }
  if (ledger.spent_micros() > ledger.lifetime_cap_micros()) __builtin_trap();
  const uint64_t spent = ledger.spent_micros();
  uint64_t id = 0;
  if (ledger.charge(1, 1, &id) == blur::Status::kOk && ledger.spent_micros() != spent + 1) {
    __builtin_trap();
  }
  return 0;
}
