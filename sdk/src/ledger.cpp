#include "blur/ledger.h"

#include <stddef.h>
#include <string.h>

#include "crc32.h"
#include "flash_write.h"
#include "mbedtls/platform_util.h"
#include "little_endian.h"

namespace blur {

namespace {

constexpr uint32_t kMagic = 0x4C524C42;  // "BLRL"
constexpr uint32_t kFormat = 3;
constexpr uint32_t kCrcOffset = Ledger::kRecordSize - 4;
constexpr uint32_t kSlotCount = 2;

bool valid_policy(const LedgerPolicy& p) {
  if (p.lifetime_cap_micros == 0 || p.metric_cap_count > kMaxLedgerMetrics) return false;
  if ((p.window_seconds == 0) != (p.window_allowance_micros == 0)) return false;
  for (uint32_t i = 0; i < p.metric_cap_count; ++i) {
    if (p.metric_caps[i].cap_micros == 0) return false;
    for (uint32_t j = 0; j < i; ++j) {
      if (p.metric_caps[j].metric_id == p.metric_caps[i].metric_id) return false;
    }
  }
  return true;
}

bool is_zero(const uint8_t* bytes, size_t length) {
  uint8_t any = 0;
  for (size_t i = 0; i < length; ++i) any |= bytes[i];
  return any == 0;
}

bool has_counter(const Port& port) {
  return port.counter_read != nullptr && port.counter_advance != nullptr;
}

bool geometry_ok(const Port& port, Partition partition) {
  return port.read != nullptr && port.prog != nullptr && port.erase != nullptr &&
         port.sync != nullptr && partition.block_count >= kSlotCount &&
         partition.first_block <= port.block_count &&
         partition.block_count <= port.block_count - partition.first_block &&
         port.block_size >= Ledger::kRecordSize &&
         (port.counter_read == nullptr) == (port.counter_advance == nullptr);
}

enum class SlotState { kBlank, kInvalid, kValid };

// A uint32_t (width 4) or uint64_t (width 8) member, through its bytes.
uint64_t member_value(const uint8_t* member, uint32_t width) {
  if (width == 4) {
    uint32_t value;
    memcpy(&value, member, sizeof value);
    return value;
  }
  uint64_t value;
  memcpy(&value, member, sizeof value);
  return value;
}

void set_member(uint8_t* member, uint32_t width, uint64_t value) {
  if (width == 4) {
    const uint32_t narrow = static_cast<uint32_t>(value);
    memcpy(member, &narrow, sizeof narrow);
  } else {
    memcpy(member, &value, sizeof value);
  }
}

}  // namespace

// The record's byte layout (ledger.h), written once for both directions: the
// same walk stores a Record into bytes or loads it from them.
class LedgerRecordCodec {
 public:
  using Record = Ledger::Record;

  static void serialize(Record& record, uint8_t out[Ledger::kRecordSize]) {
    walk(record, out, nullptr);
    store_le32(out + kCrcOffset, crc32(out, kCrcOffset));
  }

  // A record is valid when its CRC matches and its contents are consistent:
  // a valid policy and totals within their caps (a forged or corrupted
  // record with a correct CRC still cannot open a ledger that breaks its own
  // caps).
  static bool parse(const uint8_t in[Ledger::kRecordSize], Record* r) {
    if (load_le32(in + kCrcOffset) != crc32(in, kCrcOffset)) return false;
    *r = Record{};
    if (!walk(*r, nullptr, in) || !valid_policy(r->policy)) return false;
    for (uint32_t i = 0; i < r->policy.metric_cap_count; ++i) {
      if (r->metric_spent[i] > r->policy.metric_caps[i].cap_micros) return false;
    }
    return r->memo_count <= kMaxMemoValues && r->spent <= r->policy.lifetime_cap_micros &&
           r->window_spent <= r->policy.window_allowance_micros;
  }

  static Status read_slot(const Port& port, uint32_t block, Record* record, SlotState* state) {
    uint8_t bytes[Ledger::kRecordSize];
    if (port.read(port.context, block, 0, bytes, sizeof bytes) != Status::kOk) {
      return Status::kStorageFailure;
    }
    if (parse(bytes, record)) {
      *state = SlotState::kValid;
    } else {
      *state = is_erased(bytes, sizeof bytes) ? SlotState::kBlank : SlotState::kInvalid;
    }
    mbedtls_platform_zeroize(bytes, sizeof bytes);  // it held the device secret
    return Status::kOk;
  }

  // The valid record with the newest sequence of the two slots: kOk, or
  // kNotProvisioned (both blank), kStorageCorrupt (neither valid),
  // kStorageFailure (the port failed).
  static Status load_newest(const Port& port, Partition partition, Record* newest) {
    Record record;
    SlotState states[kSlotCount];
    bool found = false;
    Status status = Status::kOk;
    for (uint32_t slot = 0; slot < kSlotCount && status == Status::kOk; ++slot) {
      status = read_slot(port, partition.first_block + slot, &record, &states[slot]);
      if (status == Status::kOk && states[slot] == SlotState::kValid &&
          (!found || sequence_newer(record.sequence, newest->sequence))) {
        *newest = record;
        found = true;
      }
    }
    mbedtls_platform_zeroize(&record, sizeof record);  // a stack copy of the secret
    if (status != Status::kOk || found) return status;
    const bool blank = states[0] == SlotState::kBlank && states[1] == SlotState::kBlank;
    return blank ? Status::kNotProvisioned : Status::kStorageCorrupt;
  }

 private:
  // The record's fields in their byte order, one entry each: the Record
  // member's offset and its kind (one table instead of code per field).
  enum Kind : uint16_t { kU32 = 0, kU64 = 1, kSecret = 2, kConstant = 3 };
  static constexpr uint32_t kConstants[] = {kMagic, kFormat, 0};  // kConstant: index here
  static constexpr uint32_t kFieldCount = 13 + 4 * kMaxLedgerMetrics + 2 + 2 * kMaxMemoValues;
  struct Table {
    uint16_t fields[kFieldCount];  // offset | kind << 12
    uint32_t bytes;                // the record's size before its CRC
  };

  static constexpr uint32_t width_of(uint32_t kind) {
    return kind == kU64 ? 8 : kind == kSecret ? kLedgerSecretSize : 4;
  }

  static constexpr Table make_table() {
    Table t{};
    uint32_t n = 0;
    auto add = [&](size_t offset, Kind kind) {
      t.fields[n++] = static_cast<uint16_t>(offset | uint32_t{kind} << 12);
      t.bytes += width_of(kind);
    };
    constexpr size_t kPolicy = offsetof(Record, policy);
    add(0, kConstant);  // magic
    add(1, kConstant);  // format
    add(offsetof(Record, sequence), kU32);
    add(kPolicy + offsetof(LedgerPolicy, metric_cap_count), kU32);
    add(offsetof(Record, device_nonce), kU64);
    add(kPolicy + offsetof(LedgerPolicy, lifetime_cap_micros), kU64);
    add(offsetof(Record, spent), kU64);
    add(offsetof(Record, next_report_id), kU64);
    add(kPolicy + offsetof(LedgerPolicy, window_seconds), kU64);
    add(kPolicy + offsetof(LedgerPolicy, window_allowance_micros), kU64);
    add(offsetof(Record, window_start), kU64);
    add(offsetof(Record, window_spent), kU64);
    add(offsetof(Record, counter), kU64);
    for (size_t i = 0; i < kMaxLedgerMetrics; ++i) {
      const size_t cap = kPolicy + offsetof(LedgerPolicy, metric_caps) + i * sizeof(MetricCap);
      add(cap + offsetof(MetricCap, metric_id), kU32);
      add(2, kConstant);  // reserved: 0
      add(cap + offsetof(MetricCap, cap_micros), kU64);
      add(offsetof(Record, metric_spent) + i * sizeof(uint64_t), kU64);
    }
    add(offsetof(Record, secret), kSecret);
    add(offsetof(Record, memo_count), kU32);
    for (size_t i = 0; i < kMaxMemoValues; ++i) {
      const size_t memo = offsetof(Record, memo) + i * sizeof(Ledger::MemoValue);
      add(memo + offsetof(Ledger::MemoValue, metric_id), kU32);
      add(memo + offsetof(Ledger::MemoValue, value), kU32);
    }
    return t;
  }
  static const Table kTable;

  // Stores `r` into `out`, or (out == nullptr) loads it from `in`; false if
  // a loaded magic, format or reserved word is wrong.
  static bool walk(Record& r, uint8_t* out, const uint8_t* in) {
    static_assert(make_table().bytes == kCrcOffset, "the record layout of ledger.h");
    static_assert(sizeof(Record) <= 0xFFF,
                  "member offsets take 12 bits: fewer BLUR_LEDGER_MAX_METRICS / _MEMO_VALUES");
    uint8_t* const base = reinterpret_cast<uint8_t*>(&r);
    uint32_t at = 0;
    for (const uint16_t entry : kTable.fields) {
      const uint32_t kind = entry >> 12;
      uint8_t* const field = base + (entry & 0xFFF);
      const uint32_t width = width_of(kind);
      if (kind == kSecret) {
        memcpy(out != nullptr ? out + at : field, out != nullptr ? field : in + at, width);
      } else if (kind == kConstant) {
        const uint32_t constant = kConstants[entry & 0xFFF];
        if (out != nullptr) {
          store_le32(out + at, constant);
        } else if (load_le32(in + at) != constant) {
          return false;
        }
      } else {
        // The member's value (a uint32_t or uint64_t) as little-endian bytes.
        if (out == nullptr) {
          set_member(field, width, width == 8 ? load_le64(in + at) : load_le32(in + at));
        } else if (width == 8) {
          store_le64(out + at, member_value(field, width));
        } else {
          store_le32(out + at, static_cast<uint32_t>(member_value(field, width)));
        }
      }
      at += width;
    }
    return true;
  }
};

const LedgerRecordCodec::Table LedgerRecordCodec::kTable = LedgerRecordCodec::make_table();

Ledger::~Ledger() { mbedtls_platform_zeroize(record_.secret, sizeof record_.secret); }

Status Ledger::open(const Port& port, Partition partition) {
  open_ = false;
  if (!geometry_ok(port, partition)) return Status::kInvalidArgument;
  Record newest;
  Status status = LedgerRecordCodec::load_newest(port, partition, &newest);
  if (status == Status::kOk && has_counter(port)) {
    uint64_t counter = 0;
    if (port.counter_read(port.context, &counter) != Status::kOk) {
      status = Status::kStorageFailure;
    } else if (newest.counter < counter) {
      status = Status::kStorageRollback;
    } else if (newest.counter > counter &&
               port.counter_advance(port.context, newest.counter) != Status::kOk) {
      // (A write that reached flash but not the counter is completed here.)
      status = Status::kStorageFailure;
    }
  }
  if (status == Status::kOk) {
    port_ = port;
    partition_ = partition;
    record_ = newest;
    has_secret_ = !is_zero(record_.secret, sizeof record_.secret);
    open_ = true;
  }
  mbedtls_platform_zeroize(&newest, sizeof newest);
  return status;
}

Status Ledger::provision(const Port& port, Partition partition, const LedgerPolicy& policy,
                         uint64_t device_nonce) {
  static constexpr uint8_t kNoSecret[kLedgerSecretSize] = {};
  return provision(port, partition, policy, device_nonce, kNoSecret);
}

Status Ledger::provision(const Port& port, Partition partition, const LedgerPolicy& policy,
                         uint64_t device_nonce, const uint8_t secret[kLedgerSecretSize]) {
  open_ = false;
  if (secret == nullptr) return Status::kInvalidArgument;
  if (!geometry_ok(port, partition) || !valid_policy(policy)) return Status::kInvalidArgument;
  if (policy.window_seconds != 0 && port.now == nullptr) return Status::kInvalidArgument;
  Record first{};
  const Status existing = LedgerRecordCodec::load_newest(port, partition, &first);
  if (existing == Status::kOk) {
    mbedtls_platform_zeroize(&first, sizeof first);
    return Status::kAlreadyProvisioned;
  }
  if (existing == Status::kStorageFailure) return existing;
  first = Record{};
  if (policy.window_seconds != 0 && port.now(port.context, &first.window_start) != Status::kOk) {
    return Status::kClockFailure;
  }
  // The first record continues from the device's counter (write() adds 1)
  // and has sequence 1.
  if (has_counter(port) && port.counter_read(port.context, &first.counter) != Status::kOk) {
    return Status::kStorageFailure;
  }
  first.device_nonce = device_nonce;
  first.policy = policy;
  for (uint32_t i = policy.metric_cap_count; i < kMaxLedgerMetrics; ++i) {
    first.policy.metric_caps[i] = MetricCap{0, 0};
  }
  memcpy(first.secret, secret, sizeof first.secret);
  port_ = port;
  partition_ = partition;
  record_ = Record{};
  const Status written = write(first);
  mbedtls_platform_zeroize(first.secret, sizeof first.secret);
  if (written != Status::kOk) return written;
  has_secret_ = !is_zero(record_.secret, sizeof record_.secret);
  open_ = true;
  return Status::kOk;
}

bool Ledger::memoized(uint32_t metric_id, uint32_t value) const {
  for (uint32_t i = 0; i < record_.memo_count; ++i) {
    if (record_.memo[i].metric_id == metric_id && record_.memo[i].value == value) return true;
  }
  return false;
}

Status Ledger::memoized_record(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                               uint32_t metric_id, uint32_t value, Record* next) const {
  if (!open_) return Status::kLedgerClosed;
  if (!has_secret_ || longitudinal_epsilon == 0 || longitudinal_epsilon < report_epsilon) {
    return Status::kInvalidArgument;
  }
  const bool known = memoized(metric_id, value);
  if (!known && record_.memo_count == kMaxMemoValues) return Status::kMemoTableFull;
  // The longitudinal epsilon once per distinct value, the report's every time
  // (0 for a repeat of a purely memoized report: only the report id moves).
  const uint64_t amount = uint64_t{report_epsilon} + (known ? 0 : longitudinal_epsilon);
  BLUR_TRY(charged_record(amount, metric_id, next));
  if (!known) next->memo[next->memo_count++] = MemoValue{metric_id, value};
  return Status::kOk;
}

Status Ledger::check_memoized(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                              uint32_t metric_id, uint32_t value) const {
  Record next;
  const Status status =
      memoized_record(report_epsilon, longitudinal_epsilon, metric_id, value, &next);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

Status Ledger::charge_memoized(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                               uint32_t metric_id, uint32_t value, uint64_t* report_id) {
  if (report_id == nullptr) return Status::kInvalidArgument;
  Record next;
  Status status = memoized_record(report_epsilon, longitudinal_epsilon, metric_id, value, &next);
  if (status == Status::kOk) status = commit(next, report_id);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

uint64_t Ledger::metric_spent_micros(uint32_t metric_id) const {
  for (uint32_t i = 0; i < record_.policy.metric_cap_count; ++i) {
    if (record_.policy.metric_caps[i].metric_id == metric_id) return record_.metric_spent[i];
  }
  return 0;
}

Status Ledger::charged_record(uint64_t epsilon, uint32_t metric_id, Record* next) const {
  if (!open_) return Status::kLedgerClosed;
  const LedgerPolicy& policy = record_.policy;
  *next = record_;
  if (epsilon > policy.lifetime_cap_micros - record_.spent) return Status::kBudgetExhausted;
  if (policy.window_seconds != 0) {
    uint64_t now = 0;
    if (port_.now == nullptr || port_.now(port_.context, &now) != Status::kOk) {
      return Status::kClockFailure;
    }
    // Roll forward by whole windows; a clock behind the window start (set
    // back, or a reset RTC) keeps the current window: it never refills.
    if (now >= next->window_start && now - next->window_start >= policy.window_seconds) {
      next->window_start +=
          (now - next->window_start) / policy.window_seconds * policy.window_seconds;
      next->window_spent = 0;
    }
    if (epsilon > policy.window_allowance_micros - next->window_spent) {
      return Status::kWindowBudgetExhausted;
    }
    next->window_spent += epsilon;
  }
  for (uint32_t i = 0; i < policy.metric_cap_count; ++i) {
    if (policy.metric_caps[i].metric_id != metric_id) continue;
    if (epsilon > policy.metric_caps[i].cap_micros - record_.metric_spent[i]) {
      return Status::kMetricBudgetExhausted;
    }
    next->metric_spent[i] += epsilon;
  }
  next->spent += epsilon;
  next->next_report_id += 1;
  return Status::kOk;
}

Status Ledger::check(EpsilonMicros epsilon, uint32_t metric_id) const {
  if (epsilon == 0) return Status::kInvalidArgument;
  Record next;
  const Status status = charged_record(epsilon, metric_id, &next);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

Status Ledger::charge(EpsilonMicros epsilon, uint32_t metric_id, uint64_t* report_id) {
  if (report_id == nullptr || epsilon == 0) return Status::kInvalidArgument;
  Record next;
  Status status = charged_record(epsilon, metric_id, &next);
  if (status == Status::kOk) status = commit(next, report_id);
  mbedtls_platform_zeroize(next.secret, sizeof next.secret);
  return status;
}

Status Ledger::commit(Record& next, uint64_t* report_id) {
  const uint64_t id = record_.next_report_id;
  const Status written = write(next);
  if (written != Status::kOk) {
    open_ = false;  // state on flash unknown: re-open() decides
    return written;
  }
  *report_id = id;
  return Status::kOk;
}

Status Ledger::write(Record& next) {
  // A counter at its last value cannot advance: the record would wrap to 0
  // and read as a rollback at the next open(), after the charge was
  // reported durable. Only a forged or corrupt record gets there (found by
  // ledger_storage_fuzz); fail closed like any failed counter.
  if (has_counter(port_) && next.counter == UINT64_MAX) return Status::kStorageFailure;
  next.sequence = record_.sequence + 1;  // 1 for the first record (record_ is zero then)
  next.counter = has_counter(port_) ? next.counter + 1 : 0;
  uint8_t bytes[kRecordSize];
  LedgerRecordCodec::serialize(next, bytes);
  const uint32_t slot = partition_.first_block + next.sequence % kSlotCount;
  // Erase, program the body, then the CRC last: a torn write leaves an
  // invalid slot, and the other slot still holds the previous record.
  Status status = port_.erase(port_.context, slot) == Status::kOk
                      ? program_verified(port_, slot, 0, bytes, kCrcOffset, bytes + kCrcOffset, 4)
                      : Status::kStorageFailure;
  mbedtls_platform_zeroize(bytes, sizeof bytes);
  // The record is durable; now the counter, so an older image is refused.
  if (status == Status::kOk && has_counter(port_) &&
      port_.counter_advance(port_.context, next.counter) != Status::kOk) {
    status = Status::kStorageFailure;
  }
  if (status == Status::kOk) record_ = next;
  return status;
}

}  // namespace blur
