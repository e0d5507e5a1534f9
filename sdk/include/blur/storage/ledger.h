// The device's privacy-budget ledger, persisted through the storage port.
//
// Unit: epsilon in micro-nats (epsilon.h). Every mechanism charges its
// realized epsilon rounded up; the ledger only adds, it never refunds.
//
// Policy (fixed at provisioning): a lifetime cap; optionally an allowance
// per time window of W seconds (Apple-style daily budgets; needs the
// port's clock); optionally a cap per metric for up to kMaxLedgerMetrics
// metrics (other metrics are bounded by the lifetime and window caps).
// charge() refuses a report that would exceed any of them and says which:
// kBudgetExhausted (lifetime), kWindowBudgetExhausted, kMetricBudgetExhausted.
//
// The charge is durable (programmed, synced and read back) before charge()
// returns, and make_report() randomizes only after that. The ledger also
// hands out report ids, so an id is never reused across reboots.
//
// Storage: a log on the blocks of its Partition (at least two; like
// littlefs's metadata logs). A block starts with a snapshot of the whole
// record; each charge appends an entry holding what it changed. Only when
// the block is full does the log move on: the next block of the partition
// (round robin, for even wear) is erased and starts with a new snapshot, so
// a block is erased once per (entries per block + 1) charges instead of
// every other charge. Every record is programmed in whole aligned program
// units (Port::prog_size), its CRC last in a unit of its own, so flash with
// ECC words works and a torn write leaves an invalid record. open() takes
// the valid snapshot with the newest sequence (RFC 1982 serial arithmetic)
// and replays its block's entries; a torn entry ends that block's log (the
// next charge moves on). docs/storage.md has every field.
//
//   snapshot: magic u32 | format u16 (4) | ~format u16 | metric slots u16 | memo slots u16 |
//     sequence u32 | metric_count u32 | device_nonce u64 | lifetime_cap u64 |
//     spent u64 | next_report_id u64 | window_seconds u64 |
//     window_allowance u64 | window_start u64 | window_spent u64 | counter u64 |
//     metric slots x (metric_id u32 | 0 u32 | cap u64 | spent u64) |
//     device_secret[32] | memo_count u32 | memo slots x (metric_id u32 | config_digest u32)
//   entry (40 bytes, the charge itself, replayed through Ledger::apply):
//     tag u8 (0xE1) | memo_added u8 | 0 u16 | sequence u32 | counter u64 |
//     amount u64 | window_start u64 | metric_id u32 | memo_digest u32
//     (LedgerRecordCodec::encode_entry in ledger.cpp).
//
// Firmware updates: a snapshot carries its format and the capacities it was
// written with, so a build with other BLUR_LEDGER_MAX_METRICS or
// BLUR_LEDGER_MAX_MEMO_VALUES (or the two-slot format 3 of earlier
// releases) reads it and continues the same budget; a record that does not
// fit this build (more metric caps or memoized values than it holds, or a
// newer format) is refused with kStorageIncompatible and left untouched.
//
// Longitudinal privacy (memoized reports, memoized.h, loloha.h): the record
// keeps the device secret the permanent responses derive from, and for each
// memoized metric the digest of the configuration its permanent responses
// were drawn with (recorded with its first report). A memoized metric id is
// never reused with another configuration: that would draw new permanent
// responses for old values (kConfigurationChanged). What a memoized report
// charges is the same for every value (docs/math.md §5.2); the table only
// pins configurations. A record of an earlier release holds (metric, value)
// pairs of its per-value charging in the same slots: read as (metric,
// digest), they pin those metric ids to no configuration of this release,
// so a memoized metric of an earlier release needs a new id (its permanent
// responses would be drawn anew).
//
// Fail closed: with no valid record, a failed or worn-out write, a failed
// clock or a rolled-back image (see Port::counter_read), the ledger is
// closed and charges nothing until open() succeeds or the explicit
// provision() call (which refuses while any valid record exists: a budget
// is never reset by accident).
#ifndef BLUR_LEDGER_H
#define BLUR_LEDGER_H

#include <stdint.h>

#include "blur/config.h"
#include "blur/epsilon.h"
#include "blur/port.h"
#include "blur/storage/block_log.h"
#include "blur/status.h"

namespace blur {

// Capacities from config.h (BLUR_LEDGER_MAX_METRICS, _MAX_MEMO_VALUES).
inline constexpr uint32_t kMaxLedgerMetrics = BLUR_LEDGER_MAX_METRICS;
inline constexpr uint32_t kMaxMemoValues = BLUR_LEDGER_MAX_MEMO_VALUES;
inline constexpr uint32_t kLedgerSecretSize = 32;

struct MetricCap {
  uint32_t metric_id;
  uint64_t cap_micros;
};

struct LedgerPolicy {
  // Total epsilon this device may ever spend (> 0).
  uint64_t lifetime_cap_micros = 0;
  // Allowance per window of window_seconds (0: no window). Windows start at
  // the provisioning time and follow each other back to back.
  uint64_t window_seconds = 0;
  uint64_t window_allowance_micros = 0;
  // Caps of individual metrics (distinct ids, each cap > 0).
  MetricCap metric_caps[kMaxLedgerMetrics] = {};
  uint32_t metric_cap_count = 0;
};

class Ledger {
 public:
  // Bytes of a snapshot's body (before its commit unit).
  static constexpr uint32_t kSnapshotSize =
      92 + 24 * kMaxLedgerMetrics + kLedgerSecretSize + 4 + 8 * kMaxMemoValues;

  Ledger() = default;
  ~Ledger();  // wipes the device secret from RAM

  // Loads the newest state from `partition`. kNotProvisioned if every block
  // is blank, kStorageCorrupt if none holds a valid record (or a valid
  // entry breaks the ledger's arithmetic), kStorageIncompatible if a record
  // does not fit this build, kStorageRollback if the newest one is older
  // than the monotonic counter, kStorageFailure if the port fails,
  // kInvalidArgument for a bad geometry (ledger.cpp: geometry_ok) or a
  // partition of fewer than two blocks or blocks too small for a snapshot.
  Status open(const Port& port, Partition partition);

  // Writes the first record of a new device. kAlreadyProvisioned if any
  // valid record exists (even one this build cannot read); kInvalidArgument for an invalid policy (zero lifetime
  // cap, a window without allowance, repeated or zero metric caps) or a
  // window policy on a port without a clock. On corrupt storage this is the
  // documented way to start over.
  Status provision(const Port& port, Partition partition, const LedgerPolicy& policy,
                   uint64_t device_nonce);
  // The same with the device secret of memoized reports (32 random bytes
  // from the DRBG; see permanent_stream.h). Without it, charge_memoized()
  // is refused.
  Status provision(const Port& port, Partition partition, const LedgerPolicy& policy,
                   uint64_t device_nonce, const uint8_t secret[kLedgerSecretSize]);

  // Adds `epsilon` (> 0) to the spent totals of the lifetime, the current
  // window and `metric_id`, reserves the next report id, and returns only
  // after the new record is durable. When a cap would be exceeded nothing
  // changes and the status names the cap. On a storage failure the ledger
  // closes (the charge may or may not be durable: it is never assumed undone).
  Status charge(EpsilonMicros epsilon, uint32_t metric_id, uint64_t* report_id);

  // Whether charge(epsilon, metric_id) would pass the caps now (no write);
  // the same statuses as charge(). Used to refuse before any other work.
  Status check(EpsilonMicros epsilon, uint32_t metric_id) const;

  // A report of a memoized metric: charges `epsilon` (> 0) as charge() does;
  // the metric's first report also records `config_digest`, in the same
  // durable write. kConfigurationChanged if the metric was recorded with
  // another digest, kMemoTableFull if a new metric finds every slot taken,
  // kInvalidArgument without a device secret. None depends on the value.
  Status charge_memoized(EpsilonMicros epsilon, uint32_t metric_id, uint32_t config_digest,
                         uint64_t* report_id);
  Status check_memoized(EpsilonMicros epsilon, uint32_t metric_id, uint32_t config_digest) const;
  // kOk if `metric_id` is not recorded or recorded with `config_digest`,
  // else kConfigurationChanged (no write; Client::add_metric asks first).
  Status check_memoized_config(uint32_t metric_id, uint32_t config_digest) const;
  // The device secret (kLedgerSecretSize bytes), or nullptr without one.
  const uint8_t* secret() const;
  // Whether the metric is recorded with this configuration digest.
  bool memoized(uint32_t metric_id, uint32_t config_digest) const;

  bool is_open() const { return open_; }
  uint64_t device_nonce() const { return record_.device_nonce; }
  uint64_t spent_micros() const { return record_.spent; }
  uint64_t lifetime_cap_micros() const { return record_.lifetime_cap; }
  uint64_t remaining_micros() const { return open_ ? record_.lifetime_cap - record_.spent : 0; }
  // The policy provisioned (rebuilt from the record, which holds it in its
  // byte order).
  LedgerPolicy policy() const;
  // The window as of the last charge (window_start is in clock seconds).
  uint64_t window_start() const { return record_.window_start; }
  uint64_t window_spent_micros() const { return record_.window_spent; }
  // Spent by a metric with its own cap (0 for other metrics).
  uint64_t metric_spent_micros(uint32_t metric_id) const;
  uint64_t next_report_id() const { return record_.next_report_id; }

 private:
  friend class LedgerRecordCodec;  // ledger.cpp: the record's byte layout
  struct MemoMetric {
    uint32_t metric_id, config_digest;
  };
  // A metric cap and what it has spent: a snapshot's metric slot.
  struct MetricSlot {
    uint32_t metric_id;
    uint32_t reserved;  // 0
    uint64_t cap, spent;
  };
  // What one persisted record holds, its members in the snapshot body's
  // order and widths (the byte layout above, after the 12-byte header), so
  // the snapshot codec moves it in whole pieces (ledger.cpp).
  struct Record {
    uint32_t sequence;
    uint32_t metric_cap_count;
    uint64_t device_nonce;
    uint64_t lifetime_cap;
    uint64_t spent, next_report_id;
    uint64_t window_seconds, window_allowance;
    uint64_t window_start, window_spent;
    uint64_t counter;  // the monotonic counter's value for this record (without one: carried)
    MetricSlot metrics[kMaxLedgerMetrics];
    uint8_t secret[kLedgerSecretSize];  // all zero: no device secret
    uint32_t memo_count;
    MemoMetric memo[kMaxMemoValues];
  };

  // One charge, as charge() makes it and a log entry stores it.
  struct Charge {
    uint64_t amount;        // micro-nats added to every total it counts against
    uint64_t window_start;  // the window it falls in (the current one, or a later one)
    uint32_t metric_id;
    uint32_t memo_digest;  // with memo: metric_id's configuration digest, now recorded
    bool memo;
  };
  static bool first_record(const LedgerPolicy& policy, Record* r);
  // Adds a charge to `r`, or returns the cap it would break (kMemoTableFull
  // when a new memoized metric has no room). The one arithmetic of charge()
  // and of replaying the log at open(). A refusal may leave `r` half changed.
  static Status apply(const Charge& charge, Record* r);
  // The record a charge would produce, or the cap it would break.
  Status charged_record(uint64_t epsilon, uint32_t metric_id, bool memo, uint32_t digest,
                        Record* next, Charge* charge) const;
  Status memoized_record(EpsilonMicros epsilon, uint32_t metric_id, uint32_t config_digest,
                         Record* next, Charge* charge) const;
  // Persists `next` as the following record, then makes it the current one.
  // On failure the ledger closes (the flash state is for open() to decide).
  Status commit(Record& next, const Charge& charge, uint64_t* report_id);
  // As an entry of the active block's log (`charge` given and room left) or
  // as the snapshot starting the next block.
  Status write(Record& next, const Charge* charge);

  Port port_{};
  BlockLog log_;  // the block the log is in, where its next entry goes
  bool open_ = false;
  Record record_{};  // the newest durable record
};

}  // namespace blur

#endif  // BLUR_LEDGER_H
