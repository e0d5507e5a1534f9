#include "blur/ledger.h"

#include <string.h>

#include "crc32.h"
#include "little_endian.h"

namespace blur {

namespace {

constexpr uint32_t kMagic = 0x4C524C42;  // "BLRL"
constexpr uint32_t kFormat = 1;
constexpr uint32_t kCrcOffset = 48;
constexpr uint32_t kSlotCount = 2;

struct Record {
  uint32_t sequence;
  uint64_t device_nonce;
  uint64_t cap;
  uint64_t spent;
  uint64_t next_report_id;
};

void serialize(const Record& r, uint8_t out[Ledger::kRecordSize]) {
  store_le32(out + 0, kMagic);
  store_le32(out + 4, kFormat);
  store_le32(out + 8, r.sequence);
  store_le32(out + 12, 0);
  store_le64(out + 16, r.device_nonce);
  store_le64(out + 24, r.cap);
  store_le64(out + 32, r.spent);
  store_le64(out + 40, r.next_report_id);
  store_le32(out + kCrcOffset, crc32(out, kCrcOffset));
}

bool parse(const uint8_t in[Ledger::kRecordSize], Record* r) {
  if (load_le32(in + 0) != kMagic || load_le32(in + 4) != kFormat) return false;
  if (load_le32(in + kCrcOffset) != crc32(in, kCrcOffset)) return false;
  r->sequence = load_le32(in + 8);
  r->device_nonce = load_le64(in + 16);
  r->cap = load_le64(in + 24);
  r->spent = load_le64(in + 32);
  r->next_report_id = load_le64(in + 40);
  return r->spent <= r->cap;
}

bool is_blank(const uint8_t* bytes, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (bytes[i] != 0xFF) return false;
  }
  return true;
}

// Sequence a is newer than b, modulo 2^32 (RFC 1982 serial arithmetic).
bool newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

bool geometry_ok(const Port& port) {
  return port.read != nullptr && port.prog != nullptr && port.erase != nullptr &&
         port.sync != nullptr && port.block_count >= kSlotCount &&
         port.block_size >= Ledger::kRecordSize;
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
  port_ = port;
  sequence_ = best->sequence;
  device_nonce_ = best->device_nonce;
  cap_ = best->cap;
  spent_ = best->spent;
  next_report_id_ = best->next_report_id;
  open_ = true;
  return Status::kOk;
}

Status Ledger::provision(const Port& port, const LedgerPolicy& policy, uint64_t device_nonce) {
  open_ = false;
  if (!geometry_ok(port)) return Status::kInvalidArgument;
  for (uint32_t slot = 0; slot < kSlotCount; ++slot) {
    Record record;
    SlotState state;
    BLUR_TRY(read_slot(port, slot, &record, &state));
    if (state == SlotState::kValid) return Status::kAlreadyProvisioned;
  }
  port_ = port;
  device_nonce_ = device_nonce;
  cap_ = policy.lifetime_cap_micros;
  BLUR_TRY(write(1, 0, 0));
  open_ = true;
  return Status::kOk;
}

Status Ledger::charge(EpsilonMicros epsilon, uint64_t* report_id) {
  if (!open_) return Status::kLedgerClosed;
  if (epsilon == 0 || report_id == nullptr) return Status::kInvalidArgument;
  if (epsilon > cap_ - spent_) return Status::kBudgetExhausted;
  const uint64_t id = next_report_id_;
  const Status written = write(sequence_ + 1, spent_ + epsilon, id + 1);
  if (written != Status::kOk) {
    open_ = false;  // state on flash unknown: re-open() decides
    return written;
  }
  *report_id = id;
  return Status::kOk;
}

Status Ledger::write(uint32_t sequence, uint64_t spent, uint64_t next_report_id) {
  const Record record{sequence, device_nonce_, cap_, spent, next_report_id};
  uint8_t bytes[kRecordSize];
  serialize(record, bytes);
  const uint32_t slot = sequence % kSlotCount;
  // Erase, program the body, then the CRC last: a torn write leaves an
  // invalid slot, and the other slot still holds the previous record.
  if (port_.erase(port_.context, slot) != Status::kOk ||
      port_.prog(port_.context, slot, 0, bytes, kCrcOffset) != Status::kOk ||
      port_.prog(port_.context, slot, kCrcOffset, bytes + kCrcOffset, kRecordSize - kCrcOffset) !=
          Status::kOk ||
      port_.sync(port_.context) != Status::kOk) {
    return Status::kStorageFailure;
  }
  uint8_t check[kRecordSize];
  if (port_.read(port_.context, slot, 0, check, sizeof check) != Status::kOk ||
      memcmp(check, bytes, sizeof check) != 0) {
    return Status::kStorageFailure;
  }
  sequence_ = sequence;
  spent_ = spent;
  next_report_id_ = next_report_id;
  return Status::kOk;
}

}  // namespace blur
