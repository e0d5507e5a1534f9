#include "blur/ledger.h"

#include <string.h>

#include "crc32.h"
#include "mbedtls/platform_util.h"
#include "little_endian.h"

namespace blur {

namespace {

constexpr uint32_t kMagic = 0x4C524C42;  // "BLRL"
constexpr uint32_t kFormat = 3;
constexpr uint32_t kMetricsOffset = 88;
constexpr uint32_t kSecretOffset = kMetricsOffset + 24 * kMaxLedgerMetrics;
constexpr uint32_t kMemoCountOffset = kSecretOffset + kLedgerSecretSize;
constexpr uint32_t kMemoOffset = kMemoCountOffset + 4;
constexpr uint32_t kCrcOffset = kMemoOffset + 8 * kMaxMemoValues;
constexpr uint32_t kSlotCount = 2;
static_assert(kCrcOffset + 4 == Ledger::kRecordSize, "record layout");

struct Record {
  uint32_t sequence;
  uint64_t device_nonce;
  uint64_t counter;
  LedgerPolicy policy;
  uint64_t spent, next_report_id, window_start, window_spent;
  uint64_t metric_spent[kMaxLedgerMetrics];
  uint8_t secret[kLedgerSecretSize];
  uint32_t memo_count;
  uint32_t memo[kMaxMemoValues][2];  // metric id, value
};

void serialize(const Record& r, uint8_t out[Ledger::kRecordSize]) {
  memset(out, 0, Ledger::kRecordSize);
  store_le32(out + 0, kMagic);
  store_le32(out + 4, kFormat);
  store_le32(out + 8, r.sequence);
  store_le32(out + 12, r.policy.metric_cap_count);
  store_le64(out + 16, r.device_nonce);
  store_le64(out + 24, r.policy.lifetime_cap_micros);
  store_le64(out + 32, r.spent);
  store_le64(out + 40, r.next_report_id);
  store_le64(out + 48, r.policy.window_seconds);
  store_le64(out + 56, r.policy.window_allowance_micros);
  store_le64(out + 64, r.window_start);
  store_le64(out + 72, r.window_spent);
  store_le64(out + 80, r.counter);
  for (uint32_t i = 0; i < kMaxLedgerMetrics; ++i) {
    uint8_t* m = out + kMetricsOffset + 24 * i;
    store_le32(m, r.policy.metric_caps[i].metric_id);
    store_le64(m + 8, r.policy.metric_caps[i].cap_micros);
    store_le64(m + 16, r.metric_spent[i]);
  }
  memcpy(out + kSecretOffset, r.secret, kLedgerSecretSize);
  store_le32(out + kMemoCountOffset, r.memo_count);
  for (uint32_t i = 0; i < kMaxMemoValues; ++i) {
    store_le32(out + kMemoOffset + 8 * i, r.memo[i][0]);
    store_le32(out + kMemoOffset + 8 * i + 4, r.memo[i][1]);
  }
  store_le32(out + kCrcOffset, crc32(out, kCrcOffset));
}

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

// A record is valid when its CRC matches and its contents are consistent:
// a valid policy and totals within their caps (a forged or corrupted record
// with a correct CRC still cannot open a ledger that breaks its own caps).
bool parse(const uint8_t in[Ledger::kRecordSize], Record* r) {
  if (load_le32(in + 0) != kMagic || load_le32(in + 4) != kFormat) return false;
  if (load_le32(in + kCrcOffset) != crc32(in, kCrcOffset)) return false;
  *r = Record{};
  r->sequence = load_le32(in + 8);
  r->policy.metric_cap_count = load_le32(in + 12);
  r->device_nonce = load_le64(in + 16);
  r->policy.lifetime_cap_micros = load_le64(in + 24);
  r->spent = load_le64(in + 32);
  r->next_report_id = load_le64(in + 40);
  r->policy.window_seconds = load_le64(in + 48);
  r->policy.window_allowance_micros = load_le64(in + 56);
  r->window_start = load_le64(in + 64);
  r->window_spent = load_le64(in + 72);
  r->counter = load_le64(in + 80);
  if (r->policy.metric_cap_count > kMaxLedgerMetrics) return false;
  for (uint32_t i = 0; i < kMaxLedgerMetrics; ++i) {
    const uint8_t* m = in + kMetricsOffset + 24 * i;
    r->policy.metric_caps[i].metric_id = load_le32(m);
    r->policy.metric_caps[i].cap_micros = load_le64(m + 8);
    r->metric_spent[i] = load_le64(m + 16);
    if (i < r->policy.metric_cap_count &&
        r->metric_spent[i] > r->policy.metric_caps[i].cap_micros) {
      return false;
    }
  }
  memcpy(r->secret, in + kSecretOffset, kLedgerSecretSize);
  r->memo_count = load_le32(in + kMemoCountOffset);
  if (r->memo_count > kMaxMemoValues) return false;
  for (uint32_t i = 0; i < kMaxMemoValues; ++i) {
    r->memo[i][0] = load_le32(in + kMemoOffset + 8 * i);
    r->memo[i][1] = load_le32(in + kMemoOffset + 8 * i + 4);
  }
  return valid_policy(r->policy) && r->spent <= r->policy.lifetime_cap_micros &&
         r->window_spent <= r->policy.window_allowance_micros;
}

bool is_zero(const uint8_t* bytes, size_t length) {
  uint8_t any = 0;
  for (size_t i = 0; i < length; ++i) any |= bytes[i];
  return any == 0;
}

bool is_blank(const uint8_t* bytes, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (bytes[i] != 0xFF) return false;
  }
  return true;
}

// Sequence a is newer than b, modulo 2^32 (RFC 1982 serial arithmetic).
bool newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

bool has_counter(const Port& port) {
  return port.counter_read != nullptr && port.counter_advance != nullptr;
}

bool geometry_ok(const Port& port) {
  return port.read != nullptr && port.prog != nullptr && port.erase != nullptr &&
         port.sync != nullptr && port.block_count >= kSlotCount &&
         port.block_size >= Ledger::kRecordSize &&
         (port.counter_read == nullptr) == (port.counter_advance == nullptr);
}

enum class SlotState { kBlank, kInvalid, kValid };

Status read_slot(const Port& port, uint32_t slot, Record* record, SlotState* state) {
  uint8_t bytes[Ledger::kRecordSize];
  if (port.read(port.context, slot, 0, bytes, sizeof bytes) != Status::kOk) {
    return Status::kStorageFailure;
  }
  if (parse(bytes, record)) {
    *state = SlotState::kValid;
  } else {
    *state = is_blank(bytes, sizeof bytes) ? SlotState::kBlank : SlotState::kInvalid;
  }
  return Status::kOk;
}

}  // namespace

Ledger::~Ledger() { mbedtls_platform_zeroize(secret_, sizeof secret_); }

Status Ledger::open(const Port& port) {
  open_ = false;
  if (!geometry_ok(port)) return Status::kInvalidArgument;
  Record records[kSlotCount];
  SlotState states[kSlotCount];
  for (uint32_t slot = 0; slot < kSlotCount; ++slot) {
    BLUR_TRY(read_slot(port, slot, &records[slot], &states[slot]));
  }
  const Record* best = nullptr;
  for (uint32_t slot = 0; slot < kSlotCount; ++slot) {
    if (states[slot] == SlotState::kValid &&
        (best == nullptr || newer(records[slot].sequence, best->sequence))) {
      best = &records[slot];
    }
  }
  if (best == nullptr) {
    const bool blank = states[0] == SlotState::kBlank && states[1] == SlotState::kBlank;
    return blank ? Status::kNotProvisioned : Status::kStorageCorrupt;
  }
  if (has_counter(port)) {
    uint64_t counter = 0;
    if (port.counter_read(port.context, &counter) != Status::kOk) return Status::kStorageFailure;
    if (best->counter < counter) return Status::kStorageRollback;
    // A write that reached flash but not the counter: complete it.
    if (best->counter > counter &&
        port.counter_advance(port.context, best->counter) != Status::kOk) {
      return Status::kStorageFailure;
    }
  }
  port_ = port;
  device_nonce_ = best->device_nonce;
  policy_ = best->policy;
  memcpy(secret_, best->secret, sizeof secret_);
  has_secret_ = !is_zero(secret_, sizeof secret_);
  State state{};
  state.spent = best->spent;
  state.next_report_id = best->next_report_id;
  state.window_start = best->window_start;
  state.window_spent = best->window_spent;
  memcpy(state.metric_spent, best->metric_spent, sizeof state.metric_spent);
  state.memo_count = best->memo_count;
  for (uint32_t i = 0; i < kMaxMemoValues; ++i) {
    state.memo[i] = MemoValue{best->memo[i][0], best->memo[i][1]};
  }
  adopt(best->sequence, best->counter, state);
  open_ = true;
  return Status::kOk;
}

Status Ledger::provision(const Port& port, const LedgerPolicy& policy, uint64_t device_nonce) {
  static constexpr uint8_t kNoSecret[kLedgerSecretSize] = {};
  return provision(port, policy, device_nonce, kNoSecret);
}

Status Ledger::provision(const Port& port, const LedgerPolicy& policy, uint64_t device_nonce,
                         const uint8_t secret[kLedgerSecretSize]) {
  open_ = false;
  if (secret == nullptr) return Status::kInvalidArgument;
  if (!geometry_ok(port) || !valid_policy(policy)) return Status::kInvalidArgument;
  if (policy.window_seconds != 0 && port.now == nullptr) return Status::kInvalidArgument;
  for (uint32_t slot = 0; slot < kSlotCount; ++slot) {
    Record record;
    SlotState state;
    BLUR_TRY(read_slot(port, slot, &record, &state));
    if (state == SlotState::kValid) return Status::kAlreadyProvisioned;
  }
  State first{};
  if (policy.window_seconds != 0 && port.now(port.context, &first.window_start) != Status::kOk) {
    return Status::kClockFailure;
  }
  uint64_t counter = 0;
  if (has_counter(port) && port.counter_read(port.context, &counter) != Status::kOk) {
    return Status::kStorageFailure;
  }
  port_ = port;
  device_nonce_ = device_nonce;
  policy_ = policy;
  memcpy(secret_, secret, sizeof secret_);
  has_secret_ = !is_zero(secret_, sizeof secret_);
  for (uint32_t i = policy.metric_cap_count; i < kMaxLedgerMetrics; ++i) {
    policy_.metric_caps[i] = MetricCap{0, 0};
  }
  // Sequence 0 is written as 1 below; the counter continues from the device's.
  sequence_ = 0;
  counter_ = counter;
  BLUR_TRY(write(first));
  open_ = true;
  return Status::kOk;
}

Ledger::State Ledger::current_state() const {
  State state{};
  state.spent = spent_;
  state.next_report_id = next_report_id_;
  state.window_start = window_start_;
  state.window_spent = window_spent_;
  memcpy(state.metric_spent, metric_spent_, sizeof state.metric_spent);
  state.memo_count = memo_count_;
  memcpy(state.memo, memo_, sizeof state.memo);
  return state;
}

bool Ledger::memoized(uint32_t metric_id, uint32_t value) const {
  for (uint32_t i = 0; i < memo_count_; ++i) {
    if (memo_[i].metric_id == metric_id && memo_[i].value == value) return true;
  }
  return false;
}

Status Ledger::memoized_state(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                              uint32_t metric_id, uint32_t value, State* next) const {
  if (!open_) return Status::kLedgerClosed;
  if (!has_secret_ || longitudinal_epsilon == 0 || longitudinal_epsilon < report_epsilon) {
    return Status::kInvalidArgument;
  }
  const bool known = memoized(metric_id, value);
  if (!known && memo_count_ == kMaxMemoValues) return Status::kMemoTableFull;
  // The longitudinal epsilon once per distinct value, the report's every time
  // (0 for a repeat of a purely memoized report: only the report id moves).
  const uint64_t amount = uint64_t{report_epsilon} + (known ? 0 : longitudinal_epsilon);
  BLUR_TRY(charged_state(amount, metric_id, next));
  if (!known) next->memo[next->memo_count++] = MemoValue{metric_id, value};
  return Status::kOk;
}

Status Ledger::check_memoized(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                              uint32_t metric_id, uint32_t value) const {
  State next;
  return memoized_state(report_epsilon, longitudinal_epsilon, metric_id, value, &next);
}

Status Ledger::charge_memoized(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                               uint32_t metric_id, uint32_t value, uint64_t* report_id) {
  if (report_id == nullptr) return Status::kInvalidArgument;
  State next;
  BLUR_TRY(memoized_state(report_epsilon, longitudinal_epsilon, metric_id, value, &next));
  const uint64_t id = next_report_id_;
  const Status written = write(next);
  if (written != Status::kOk) {
    open_ = false;
    return written;
  }
  *report_id = id;
  return Status::kOk;
}

uint64_t Ledger::metric_spent_micros(uint32_t metric_id) const {
  for (uint32_t i = 0; i < policy_.metric_cap_count; ++i) {
    if (policy_.metric_caps[i].metric_id == metric_id) return metric_spent_[i];
  }
  return 0;
}

Status Ledger::charged_state(uint64_t epsilon, uint32_t metric_id, State* next) const {
  if (!open_) return Status::kLedgerClosed;
  *next = current_state();
  if (epsilon > policy_.lifetime_cap_micros - spent_) return Status::kBudgetExhausted;
  if (policy_.window_seconds != 0) {
    uint64_t now = 0;
    if (port_.now == nullptr || port_.now(port_.context, &now) != Status::kOk) {
      return Status::kClockFailure;
    }
    // Roll forward by whole windows; a clock behind the window start (set
    // back, or a reset RTC) keeps the current window: it never refills.
    if (now >= next->window_start && now - next->window_start >= policy_.window_seconds) {
      next->window_start +=
          (now - next->window_start) / policy_.window_seconds * policy_.window_seconds;
      next->window_spent = 0;
    }
    if (epsilon > policy_.window_allowance_micros - next->window_spent) {
      return Status::kWindowBudgetExhausted;
    }
    next->window_spent += epsilon;
  }
  for (uint32_t i = 0; i < policy_.metric_cap_count; ++i) {
    if (policy_.metric_caps[i].metric_id != metric_id) continue;
    if (epsilon > policy_.metric_caps[i].cap_micros - metric_spent_[i]) {
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
  State next;
  return charged_state(epsilon, metric_id, &next);
}

Status Ledger::charge(EpsilonMicros epsilon, uint32_t metric_id, uint64_t* report_id) {
  if (report_id == nullptr || epsilon == 0) return Status::kInvalidArgument;
  State next;
  BLUR_TRY(charged_state(epsilon, metric_id, &next));
  const uint64_t id = next_report_id_;
  const Status written = write(next);
  if (written != Status::kOk) {
    open_ = false;  // state on flash unknown: re-open() decides
    return written;
  }
  *report_id = id;
  return Status::kOk;
}

Status Ledger::write(const State& next) {
  Record record{
      sequence_ + 1,     device_nonce_,     counter_ + 1, policy_, next.spent, next.next_report_id,
      next.window_start, next.window_spent, {},           {},      0,          {}};
  memcpy(record.metric_spent, next.metric_spent, sizeof record.metric_spent);
  memcpy(record.secret, secret_, sizeof record.secret);
  record.memo_count = next.memo_count;
  for (uint32_t i = 0; i < kMaxMemoValues; ++i) {
    record.memo[i][0] = next.memo[i].metric_id;
    record.memo[i][1] = next.memo[i].value;
  }
  if (!has_counter(port_)) record.counter = 0;
  uint8_t bytes[kRecordSize];
  serialize(record, bytes);
  const uint32_t slot = record.sequence % kSlotCount;
  // Erase, program the body, then the CRC last: a torn write leaves an
  // invalid slot, and the other slot still holds the previous record.
  if (port_.erase(port_.context, slot) != Status::kOk ||
      port_.prog(port_.context, slot, 0, bytes, kCrcOffset) != Status::kOk ||
      port_.prog(port_.context, slot, kCrcOffset, bytes + kCrcOffset, kRecordSize - kCrcOffset) !=
          Status::kOk ||
      port_.sync(port_.context) != Status::kOk) {
    return Status::kStorageFailure;
  }
  for (uint32_t offset = 0; offset < kRecordSize; offset += 32) {  // read back, 32 B at a time
    uint8_t check_bytes[32];
    const uint32_t size = kRecordSize - offset < 32 ? kRecordSize - offset : 32;
    if (port_.read(port_.context, slot, offset, check_bytes, size) != Status::kOk ||
        memcmp(check_bytes, bytes + offset, size) != 0) {
      return Status::kStorageFailure;
    }
  }
  // The record is durable; now the counter, so an older image is refused.
  if (has_counter(port_) && port_.counter_advance(port_.context, record.counter) != Status::kOk) {
    return Status::kStorageFailure;
  }
  adopt(record.sequence, record.counter, next);
  return Status::kOk;
}

void Ledger::adopt(uint32_t sequence, uint64_t counter, const State& state) {
  sequence_ = sequence;
  counter_ = counter;
  spent_ = state.spent;
  next_report_id_ = state.next_report_id;
  window_start_ = state.window_start;
  window_spent_ = state.window_spent;
  memcpy(metric_spent_, state.metric_spent, sizeof metric_spent_);
  memo_count_ = state.memo_count;
  memcpy(memo_, state.memo, sizeof memo_);
}

}  // namespace blur
