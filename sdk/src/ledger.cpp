#include "blur/storage/ledger.h"

#include <stddef.h>
#include <string.h>

#include "flash_write.h"
#include "mbedtls/platform_util.h"
#include "little_endian.h"

namespace blur {

namespace {

constexpr uint32_t kMagic = 0x4C524C42;  // "BLRL"
constexpr uint32_t kFormat = 4;          // a log: snapshot, then entries (ledger.h)
// Format 3 (before the log): a whole record at the start of blocks 0 and 1,
// rewritten in turn, no capacities in its
// header (this build's defaults of the time: 8 metric slots, 16 memo
// slots), its CRC right after the body. Read so an update keeps the budget.
constexpr uint32_t kLegacyFormat = 3;
constexpr uint32_t kLegacyMetricSlots = 8;
constexpr uint32_t kLegacyMemoSlots = 16;
// A sane bound on a stored header's capacities (check_config.h holds builds to it).
constexpr uint32_t kMaxStoredSlots = BLUR_LEDGER_SLOT_LIMIT;
constexpr uint32_t kMinBlocks = 2;
constexpr uint8_t kEntryTag = 0xE1;

bool is_zero(const uint8_t* bytes, size_t length) {
  uint8_t any = 0;
  for (size_t i = 0; i < length; ++i) any |= bytes[i];
  return any == 0;
}

// Adds `amount` to *spent if the total stays within `cap`.
bool spend(uint64_t amount, uint64_t cap, uint64_t* spent) {
  if (amount > cap - *spent) return false;
  *spent += amount;
  return true;
}

bool has_counter(const Port& port) {
  return port.counter_read != nullptr && port.counter_advance != nullptr;
}

// Bytes of a snapshot's body with the given slot counts.
constexpr uint32_t snapshot_size(uint32_t format, uint32_t metric_slots, uint32_t memo_slots) {
  return (format == kLegacyFormat ? 8 : 12) + 80 + 24 * metric_slots + kLedgerSecretSize + 4 +
         8 * memo_slots;
}

static_assert(snapshot_size(kFormat, kMaxLedgerMetrics, kMaxMemoValues) == Ledger::kSnapshotSize,
              "the snapshot layout of ledger.h");

bool geometry_ok(const Port& port, Partition partition) {
  return storage_fits(port, partition, kMinBlocks, record_span(port, Ledger::kSnapshotSize));
}

}  // namespace

// The snapshot and entry layouts (ledger.h), each written once for both
// directions.
class LedgerRecordCodec {
 public:
  using Record = Ledger::Record;
  using MetricSlot = Ledger::MetricSlot;
  static constexpr uint32_t kEntrySize = 40;
  static constexpr uint32_t kFixedSize = offsetof(Record, metrics);  // sequence .. counter
  static constexpr uint32_t kTailSize = kLedgerSecretSize + 4;       // secret, memo_count

  // A Record is the snapshot body in this build's capacities, member by
  // member: no padding, so its bytes are the body's on a little-endian CPU.
  static_assert(kFixedSize == 80 && sizeof(MetricSlot) == 24 &&
                    offsetof(Record, secret) == kFixedSize + 24 * kMaxLedgerMetrics &&
                    offsetof(Record, memo) == offsetof(Record, secret) + kTailSize &&
                    offsetof(Record, memo) + 8 * kMaxMemoValues + 12 == Ledger::kSnapshotSize,
                "the snapshot layout of ledger.h");

  // Between the CPU's byte order and the snapshot's little-endian words, in
  // place (its own inverse): nothing to do on a little-endian CPU.
  static void swap_words(Record& r) {
    if constexpr (!kLittleEndianCpu) {
      reverse_words(&r.sequence, 4, 2);
      reverse_words(&r.device_nonce, 8, 9);
      for (MetricSlot& slot : r.metrics) {
        reverse_words(&slot.metric_id, 4, 2);
        reverse_words(&slot.cap, 8, 2);
      }
      reverse_words(&r.memo_count, 4, 1 + 2 * kMaxMemoValues);
    }
  }

  // Programs `r` as the snapshot that starts the log's active block.
  static Status write_snapshot(const Port& port, BlockLog& log, Record& r) {
    uint8_t header[12];
    store_le32(header, kMagic);
    store_le32(header + 4, kFormat | (~kFormat & 0xFFFF) << 16);
    store_le32(header + 8, kMaxLedgerMetrics | kMaxMemoValues << 16);
    swap_words(r);
    const Status status = log.append(port, header, sizeof header,
                                     reinterpret_cast<const uint8_t*>(&r),
                                     Ledger::kSnapshotSize - sizeof header);
    swap_words(r);
    return status;
  }

  enum class Snapshot : uint8_t { kBlank, kInvalid, kValid, kIncompatible };

  // The snapshot at the start of `block`; *entries: where its log starts.
  // A valid snapshot is also consistent (a valid policy, totals within
  // their caps): a forged or corrupted record with a correct CRC still
  // cannot open a ledger that breaks its own caps. kIncompatible: a newer
  // format, or more metric caps or memoized values than this build holds.
  static Status read_snapshot(const Port& port, uint32_t block, Record* r, Snapshot* state,
                              uint32_t* entries) {
    uint8_t header[12];
    if (port.read(port.context, block, 0, header, sizeof header) != Status::kOk) {
      return Status::kStorageFailure;
    }
    *state = Snapshot::kInvalid;
    if (load_le32(header) != kMagic) {
      if (is_erased(header, sizeof header, port.erase_value)) *state = Snapshot::kBlank;
      return Status::kOk;
    }
    // The format and its complement: a torn header cannot pass for a newer
    // format (which would keep the ledger closed for no reason).
    const uint32_t format_word = load_le32(header + 4);
    const uint32_t format =
        format_word == kLegacyFormat || ((format_word ^ format_word >> 16) & 0xFFFF) != 0xFFFF
            ? format_word
            : format_word & 0xFFFF;
    uint32_t metric_slots = kLegacyMetricSlots, memo_slots = kLegacyMemoSlots;
    if (format == kFormat) {
      metric_slots = load_le32(header + 8) & 0xFFFF;
      memo_slots = load_le32(header + 8) >> 16;
    } else if (format != kLegacyFormat) {
      *state = format > kFormat && format <= 0xFFFF ? Snapshot::kIncompatible : Snapshot::kInvalid;
      return Status::kOk;
    }
    if (metric_slots > kMaxStoredSlots || memo_slots > kMaxStoredSlots) return Status::kOk;
    const uint32_t size = snapshot_size(format, metric_slots, memo_slots);
    // Format 3 put its CRC right after the body; format 4 in its own unit.
    const uint32_t mark = format == kLegacyFormat ? size : unit_align(port, size);
    if (mark + 4 > port.block_size) return Status::kOk;
    const Status checked = check_record(port, block, 0, size, mark);
    if (checked != Status::kOk) return checked == Status::kStorageCorrupt ? Status::kOk : checked;
    // The body in two reads: the fixed fields with the metric slots this
    // build has room for (the others must be unused: checked against
    // metric_cap_count below, and skipped), then the secret, memo count and
    // the memo slots it has room for. The Record's pieces lie in the same
    // order as on flash.
    *r = Record{};
    const uint32_t metrics = metric_slots < kMaxLedgerMetrics ? metric_slots : kMaxLedgerMetrics;
    const uint32_t memos = memo_slots < kMaxMemoValues ? memo_slots : kMaxMemoValues;
    const uint32_t at = format == kLegacyFormat ? 8 : 12;
    if (port.read(port.context, block, at, reinterpret_cast<uint8_t*>(r),
                  kFixedSize + 24 * metrics) != Status::kOk ||
        port.read(port.context, block, at + kFixedSize + 24 * metric_slots, r->secret,
                  kTailSize + 8 * memos) != Status::kOk) {
      return Status::kStorageFailure;
    }
    swap_words(*r);
    *entries = unit_align(port, mark + 4);
    for (uint32_t i = 0; i < metrics; ++i) {
      if (r->metrics[i].reserved != 0) return Status::kOk;  // a reserved word: 0
    }
    if (r->metric_cap_count > metric_slots || r->memo_count > memo_slots) {
      return Status::kOk;  // inconsistent: invalid
    }
    if (r->metric_cap_count > kMaxLedgerMetrics || r->memo_count > kMaxMemoValues) {
      *state = Snapshot::kIncompatible;
      return Status::kOk;
    }
    if (consistent(*r)) *state = Snapshot::kValid;
    return Status::kOk;
  }

  // A valid policy (a lifetime cap, a window with its allowance or
  // neither, distinct metric caps > 0) and totals within their caps.
  static bool consistent(const Record& r) {
    if (r.lifetime_cap == 0 || r.metric_cap_count > kMaxLedgerMetrics ||
        (r.window_seconds == 0) != (r.window_allowance == 0)) {
      return false;
    }
    for (uint32_t i = 0; i < r.metric_cap_count; ++i) {
      const MetricSlot& slot = r.metrics[i];
      if (slot.cap == 0 || slot.spent > slot.cap) return false;
      for (uint32_t j = 0; j < i; ++j) {
        if (r.metrics[j].metric_id == slot.metric_id) return false;
      }
    }
    return r.spent <= r.lifetime_cap && r.window_spent <= r.window_allowance;
  }

  // An entry: the charge, as Ledger::apply takes it, its members in the
  // entry's order and widths (like Record for the snapshot).
  //   tag u8 | memo_added u8 | 0 u16 | sequence u32 | counter u64 |
  //   amount u64 | window_start u64 | metric_id u32 | memo_digest u32
  struct Entry {
    uint8_t tag, memo_added;
    uint16_t reserved;
    uint32_t sequence;
    uint64_t counter, amount, window_start;
    uint32_t metric_id, memo_digest;
  };
  static_assert(sizeof(Entry) == kEntrySize && offsetof(Entry, metric_id) == 32 &&
                    kEntrySize <= kMaxLogHead,
                "the entry layout of ledger.h");

  static void swap_words(Entry& e) {
    if constexpr (!kLittleEndianCpu) {
      reverse_words(&e.reserved, 2, 1);
      reverse_words(&e.sequence, 4, 1);
      reverse_words(&e.counter, 8, 3);
      reverse_words(&e.metric_id, 4, 2);
    }
  }

  static Entry encode_entry(const Record& next, const Ledger::Charge& c) {
    Entry e{kEntryTag, c.memo, 0, next.sequence, next.counter, c.amount, c.window_start,
            c.metric_id, c.memo_digest};
    swap_words(e);
    return e;
  }

  // Replays an entry onto `r` through the same arithmetic as charge(), so
  // only what a charge can produce is accepted: the next sequence, and
  // totals within every cap. A CRC-valid entry that breaks them is forged
  // or corrupt: kStorageCorrupt (the ledger fails closed rather than fall
  // back to an older state); kStorageIncompatible if a memoized metric does
  // not fit this build.
  static Status apply_entry(const uint8_t in[kEntrySize], Record* r) {
    Entry e;
    memcpy(&e, in, sizeof e);
    swap_words(e);
    if (e.tag != kEntryTag || e.memo_added > 1 || e.reserved != 0 ||
        e.sequence != r->sequence + 1 || e.counter < r->counter) {
      return Status::kStorageCorrupt;
    }
    const Status applied = Ledger::apply(
        Ledger::Charge{e.amount, e.window_start, e.metric_id, e.memo_digest, e.memo_added == 1}, r);
    if (applied != Status::kOk) {
      return applied == Status::kMemoTableFull ? Status::kStorageIncompatible
                                               : Status::kStorageCorrupt;
    }
    r->sequence = e.sequence;
    r->counter = e.counter;
    return Status::kOk;
  }

  // The newest state in the partition: the newest valid snapshot, then the
  // entries of its block in order; `log`: that block, and where the next
  // entry goes (block_size when it cannot take one: full, or its log ended
  // by a torn entry). kOk, or kNotProvisioned (all blank), kStorageCorrupt
  // (nothing valid, or an inconsistent entry), kStorageIncompatible (a
  // record this build cannot hold), kStorageFailure (the port failed).
  static Status load_newest(const Port& port, Partition partition, Record* newest, BlockLog* log,
                            bool* holds_record) {
    // Every snapshot is read into *newest (no second Record on the stack);
    // the newest valid one is read again before its entries are replayed.
    bool blank = true, incompatible = false;
    uint32_t entries = 0;
    Snapshot state;
    log->reset(partition);
    for (uint32_t i = 0; i < partition.block_count; ++i) {
      BLUR_TRY(read_snapshot(port, log->block(i), newest, &state, &entries));
      blank = blank && state == Snapshot::kBlank;
      incompatible = incompatible || state == Snapshot::kIncompatible;
      if (state == Snapshot::kValid) log->consider(i, newest->sequence, entries);
    }
    const bool found = log->has_active;
    *holds_record = found || incompatible;
    // Any record this build cannot read keeps the ledger closed, even beside
    // a readable one: it may be the newest.
    if (incompatible) return Status::kStorageIncompatible;
    if (!found) return blank ? Status::kNotProvisioned : Status::kStorageCorrupt;
    BLUR_TRY(read_snapshot(port, log->block(log->active), newest, &state, &entries));
    // (Valid a moment ago: other bytes now are a failing port.)
    if (state != Snapshot::kValid) return Status::kStorageFailure;
    return replay(port, log->block(log->active), log->offset, newest, &log->offset);
  }

  // The entries of the snapshot's block, each through apply_entry.
  static Status replay(const Port& port, uint32_t block, uint32_t offset, Record* r,
                       uint32_t* append) {
    const LogVisitor entries{nullptr,
                             [](void* record, const uint8_t* entry, uint32_t, uint32_t) {
                               return apply_entry(entry, static_cast<Record*>(record));
                             },
                             r};
    return scan_log(port, block, offset, kEntrySize, entries, append);
  }
};

Ledger::~Ledger() { mbedtls_platform_zeroize(record_.secret, sizeof record_.secret); }

Status Ledger::open(const Port& port, Partition partition) {
  open_ = false;
  if (!geometry_ok(port, partition)) return Status::kInvalidArgument;
  // Loaded in place: a failure leaves the ledger closed, and what its
  // record and log then hold is never used (provision() starts anew).
  bool holds_record = false;
  Status status = LedgerRecordCodec::load_newest(port, partition, &record_, &log_, &holds_record);
  if (status == Status::kOk && has_counter(port)) {
    uint64_t counter = 0;
    if (port.counter_read(port.context, &counter) != Status::kOk) {
      status = Status::kStorageFailure;
    } else if (record_.counter < counter) {
      status = Status::kStorageRollback;
    } else if (record_.counter > counter &&
               port.counter_advance(port.context, record_.counter) != Status::kOk) {
      // (A write that reached flash but not the counter is completed here.)
      status = Status::kStorageFailure;
    }
  }
  if (status == Status::kOk) {
    port_ = port;
    open_ = true;
  }
  return status;
}

// The record of a new device under `policy` (zero spent, no secret yet);
// false for an invalid policy (ledger.h: provision).
bool Ledger::first_record(const LedgerPolicy& policy, Record* r) {
  *r = Record{};
  if (policy.metric_cap_count > kMaxLedgerMetrics) return false;
  r->metric_cap_count = policy.metric_cap_count;
  r->lifetime_cap = policy.lifetime_cap_micros;
  r->window_seconds = policy.window_seconds;
  r->window_allowance = policy.window_allowance_micros;
  for (uint32_t i = 0; i < policy.metric_cap_count; ++i) {
    r->metrics[i].metric_id = policy.metric_caps[i].metric_id;
    r->metrics[i].cap = policy.metric_caps[i].cap_micros;
  }
  return LedgerRecordCodec::consistent(*r);
}

LedgerPolicy Ledger::policy() const {
  LedgerPolicy policy;
  policy.lifetime_cap_micros = record_.lifetime_cap;
  policy.window_seconds = record_.window_seconds;
  policy.window_allowance_micros = record_.window_allowance;
  policy.metric_cap_count = record_.metric_cap_count;
  for (uint32_t i = 0; i < record_.metric_cap_count; ++i) {
    policy.metric_caps[i] = MetricCap{record_.metrics[i].metric_id, record_.metrics[i].cap};
  }
  return policy;
}

Status Ledger::provision(const Port& port, Partition partition, const LedgerPolicy& policy,
                         uint64_t device_nonce) {
  static constexpr uint8_t kNoSecret[kLedgerSecretSize] = {};
  return provision(port, partition, policy, device_nonce, kNoSecret);
}

Status Ledger::provision(const Port& port, Partition partition, const LedgerPolicy& policy,
                         uint64_t device_nonce, const uint8_t secret[kLedgerSecretSize]) {
  // Every refusal below leaves the ledger as it was (open or not); only a
  // provisioning that goes ahead replaces its state.
  if (secret == nullptr || !geometry_ok(port, partition)) return Status::kInvalidArgument;
  // What the partition holds (read into `first`, which first_record() then
  // overwrites whole: no stack copy of a stored secret is left).
  Record first;
  BlockLog log;
  bool holds_record = false;
  const Status existing = LedgerRecordCodec::load_newest(port, partition, &first, &log, &holds_record);
  if (!first_record(policy, &first) || (policy.window_seconds != 0 && port.now == nullptr)) {
    return Status::kInvalidArgument;
  }
  if (existing == Status::kStorageFailure) return existing;
  // Any valid record, even one this build cannot read or one followed by a
  // corrupt entry, is a budget that must not be reset.
  if (holds_record) return Status::kAlreadyProvisioned;
  if (policy.window_seconds != 0 && port.now(port.context, &first.window_start) != Status::kOk) {
    return Status::kClockFailure;
  }
  // The first record continues from the device's counter (write() adds 1)
  // and has sequence 1.
  if (has_counter(port) && port.counter_read(port.context, &first.counter) != Status::kOk) {
    return Status::kStorageFailure;
  }
  first.device_nonce = device_nonce;
  memcpy(first.secret, secret, sizeof first.secret);
  open_ = false;
  port_ = port;
  log_.reset(partition);  // the first snapshot goes to the partition's first block
  const Status written = write(first, nullptr);
  mbedtls_platform_zeroize(first.secret, sizeof first.secret);
  if (written != Status::kOk) return written;
  open_ = true;
  return Status::kOk;
}

const uint8_t* Ledger::secret() const {
  return is_zero(record_.secret, sizeof record_.secret) ? nullptr : record_.secret;
}

bool Ledger::memoized(uint32_t metric_id, uint32_t config_digest) const {
  for (uint32_t i = 0; i < record_.memo_count; ++i) {
    if (record_.memo[i].metric_id == metric_id) return record_.memo[i].config_digest == config_digest;
  }
  return false;
}

Status Ledger::check_memoized_config(uint32_t metric_id, uint32_t config_digest) const {
  for (uint32_t i = 0; i < record_.memo_count; ++i) {
    if (record_.memo[i].metric_id == metric_id && record_.memo[i].config_digest != config_digest) {
      return Status::kConfigurationChanged;
    }
  }
  return Status::kOk;
}

Status Ledger::memoized_record(EpsilonMicros epsilon, uint32_t metric_id, uint32_t config_digest,
                               Record* next, Charge* charge) const {
  if (!open_) return Status::kLedgerClosed;
  if (secret() == nullptr || epsilon == 0) return Status::kInvalidArgument;
  BLUR_TRY(check_memoized_config(metric_id, config_digest));
  // The same amount for every report; the first also records the digest.
  return charged_record(epsilon, metric_id, !memoized(metric_id, config_digest), config_digest,
                        next, charge);
}

Status Ledger::check_memoized(EpsilonMicros epsilon, uint32_t metric_id,
                              uint32_t config_digest) const {
  Record next;
  Charge charge;
  const Status status = memoized_record(epsilon, metric_id, config_digest, &next, &charge);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

Status Ledger::charge_memoized(EpsilonMicros epsilon, uint32_t metric_id, uint32_t config_digest,
                               uint64_t* report_id) {
  if (report_id == nullptr) return Status::kInvalidArgument;
  Record next;
  Charge charge;
  Status status = memoized_record(epsilon, metric_id, config_digest, &next, &charge);
  if (status == Status::kOk) status = commit(next, charge, report_id);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

uint64_t Ledger::metric_spent_micros(uint32_t metric_id) const {
  for (uint32_t i = 0; i < record_.metric_cap_count; ++i) {
    if (record_.metrics[i].metric_id == metric_id) return record_.metrics[i].spent;
  }
  return 0;
}

Status Ledger::charged_record(uint64_t epsilon, uint32_t metric_id, bool memo, uint32_t digest,
                              Record* next, Charge* charge) const {
  if (!open_) return Status::kLedgerClosed;
  const uint64_t window = record_.window_seconds;
  *charge = Charge{epsilon, record_.window_start, metric_id, digest, memo};
  if (window != 0) {
    uint64_t now = 0;
    if (port_.now == nullptr || port_.now(port_.context, &now) != Status::kOk) {
      return Status::kClockFailure;
    }
    // Roll forward by whole windows; a clock behind the window start (set
    // back, or a reset RTC) keeps the current window: it never refills.
    if (now >= record_.window_start && now - record_.window_start >= window) {
      charge->window_start += (now - record_.window_start) / window * window;
    }
  }
  *next = record_;
  return apply(*charge, next);
}

Status Ledger::apply(const Charge& c, Record* r) {
  if (c.memo && r->memo_count == kMaxMemoValues) return Status::kMemoTableFull;
  // (A refusal may leave `r` half changed: callers drop it, a copy or the
  // record of a ledger that stays closed.)
  if (!spend(c.amount, r->lifetime_cap, &r->spent)) return Status::kBudgetExhausted;
  if (r->window_seconds != 0) {
    if (c.window_start < r->window_start) return Status::kInvalidArgument;
    if (c.window_start != r->window_start) {
      r->window_start = c.window_start;
      r->window_spent = 0;
    }
    if (!spend(c.amount, r->window_allowance, &r->window_spent)) {
      return Status::kWindowBudgetExhausted;
    }
  }
  for (uint32_t i = 0; i < r->metric_cap_count; ++i) {
    MetricSlot& slot = r->metrics[i];
    if (slot.metric_id == c.metric_id && !spend(c.amount, slot.cap, &slot.spent)) {
      return Status::kMetricBudgetExhausted;
    }
  }
  if (c.memo) r->memo[r->memo_count++] = MemoMetric{c.metric_id, c.memo_digest};
  r->next_report_id += 1;
  return Status::kOk;
}

Status Ledger::check(EpsilonMicros epsilon, uint32_t metric_id) const {
  if (epsilon == 0) return Status::kInvalidArgument;
  Record next;
  Charge charge;
  const Status status = charged_record(epsilon, metric_id, false, 0, &next, &charge);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

Status Ledger::charge(EpsilonMicros epsilon, uint32_t metric_id, uint64_t* report_id) {
  if (report_id == nullptr || epsilon == 0) return Status::kInvalidArgument;
  Record next;
  Charge charge;
  Status status = charged_record(epsilon, metric_id, false, 0, &next, &charge);
  if (status == Status::kOk) status = commit(next, charge, report_id);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

Status Ledger::commit(Record& next, const Charge& charge, uint64_t* report_id) {
  const uint64_t id = record_.next_report_id;
  const Status written = write(next, &charge);
  if (written != Status::kOk) {
    open_ = false;  // state on flash unknown: re-open() decides
    return written;
  }
  *report_id = id;
  return Status::kOk;
}

Status Ledger::write(Record& next, const Charge* charge) {
  // A counter at its last value cannot advance: the record would wrap to 0
  // and read as a rollback at the next open(), after the charge was
  // reported durable. Only a forged or corrupt record gets there (found by
  // ledger_storage_fuzz); fail closed like any failed counter.
  if (has_counter(port_) && next.counter == UINT64_MAX) return Status::kStorageFailure;
  // `next` starts as the current record (or provision()'s first, with
  // sequence 0): the following sequence, and the counter's next value.
  // Without a counter the record carries the value it had (a replayed entry
  // never goes below the record before it).
  next.sequence += 1;
  next.counter += has_counter(port_) ? 1 : 0;
  const uint32_t entry_span = record_span(port_, LedgerRecordCodec::kEntrySize);
  Status status;
  if (charge != nullptr && log_.has_room(port_, entry_span)) {
    // Append an entry to the active block's log: no erase.
    const LedgerRecordCodec::Entry entry = LedgerRecordCodec::encode_entry(next, *charge);
    status = log_.append(port_, reinterpret_cast<const uint8_t*>(&entry), sizeof entry);
  } else {
    // The log moves on: erase the next block of the partition and start it
    // with a snapshot. Until that snapshot is valid, the block before still
    // holds the newest state on flash (a torn move leaves the previous
    // record); a failure closes the ledger, and open() finds it.
    status = log_.move_on(port_);
    if (status == Status::kOk) status = LedgerRecordCodec::write_snapshot(port_, log_, next);
  }
  // The record is durable; now the counter, so an older image is refused.
  if (status == Status::kOk && has_counter(port_) &&
      port_.counter_advance(port_.context, next.counter) != Status::kOk) {
    status = Status::kStorageFailure;
  }
  if (status == Status::kOk) record_ = next;
  return status;
}

}  // namespace blur
