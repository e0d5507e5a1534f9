// The device's privacy-budget ledger, persisted through the storage port.
//
// The ledger is charged, and the charge is durable (programmed, synced and
// read back), before any randomized report exists. It also hands out the
// report ids, so an id is never reused across reboots.
//
// Storage layout: two slots in separate erase blocks (0 and 1). A record is
//   magic u32 | format u32 | sequence u32 | 0 u32 | device_nonce u64 |
//   lifetime_cap u64 | spent u64 | next_report_id u64 | crc32 u32
// little-endian, 52 bytes; the CRC (IEEE 802.3) covers the first 48 bytes
// and is programmed last. Record `s` lives in slot s % 2, so an update never
// touches the newest valid record; open() takes the valid record with the
// newest sequence (wrap-aware).
//
// Fail closed: with no valid record, or after a failed write, the ledger is
// closed and charges nothing until open() or the explicit provision() call.
// This foundation version has a lifetime cap only; per-window and
// per-metric caps come with the full ledger.
#ifndef BLUR_LEDGER_H
#define BLUR_LEDGER_H

#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/port.h"
#include "blur/status.h"

namespace blur {

struct LedgerPolicy {
  // Total epsilon this device may ever spend, in micro-nats.
  uint64_t lifetime_cap_micros;
};

class Ledger {
 public:
  static constexpr uint32_t kRecordSize = 52;

  Ledger() = default;

  // Loads the newest valid record. kNotProvisioned if both slots are blank
  // (all 0xFF), kStorageCorrupt if neither holds a valid record,
  // kStorageFailure if the port fails, kInvalidArgument if the port's
  // geometry cannot hold two slots.
  Status open(const Port& port);

  // Writes the first record of a new device. Refuses (kAlreadyProvisioned)
  // if a valid record exists: a budget is never reset by accident. On
  // corrupt storage this is the documented way to start over.
  Status provision(const Port& port, const LedgerPolicy& policy, uint64_t device_nonce);

  // Adds `epsilon` to the spent total and reserves the next report id, and
  // returns only after the new record is durable. kBudgetExhausted (nothing
  // changes) if the cap would be exceeded; on a storage failure the ledger
  // closes (the charge may or may not be durable: it is never assumed undone).
  Status charge(EpsilonMicros epsilon, uint64_t* report_id);

  bool is_open() const { return open_; }
  uint64_t spent_micros() const { return spent_; }
  uint64_t lifetime_cap_micros() const { return cap_; }
  uint64_t remaining_micros() const { return open_ ? cap_ - spent_ : 0; }
  uint64_t device_nonce() const { return device_nonce_; }

 private:
  Status write(uint32_t sequence, uint64_t spent, uint64_t next_report_id);

  Port port_{};
  bool open_ = false;
  uint32_t sequence_ = 0;
  uint64_t device_nonce_ = 0;
  uint64_t cap_ = 0;
  uint64_t spent_ = 0;
  uint64_t next_report_id_ = 0;
};

}  // namespace blur

#endif  // BLUR_LEDGER_H
