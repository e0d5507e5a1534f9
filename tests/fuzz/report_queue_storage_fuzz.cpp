// libFuzzer: the report queue reads its acknowledgement log and segments
// from flash, which may hold anything. Opening must never crash; when it
// succeeds, a pending batch can be taken, an append that succeeds is
// durable (a reopening counts exactly one more pending report), and an
// acknowledgement that succeeds is durable (a reopening has nothing
// pending below it).
//
// Flash: 4 blocks of 512 bytes (2 for acknowledgements, 2 segments).
// Input: one byte of flags, then bytes for the flash. Flag bit 2: the bytes
// are XORed onto the image of a real queue (acknowledged and pending
// reports in both segments), so mutations start from records that open;
// else they are the image itself, the rest erased. Bit 0: every record the
// scan would read gets a correct CRC (its header's length decides where),
// so the checks behind the CRC are fuzzed too. Bit 4: 8-byte program units.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "blur/report/report_encoding.h"
#include "blur/storage/crc32.h"
#include "blur/storage/report_queue.h"
#include "flash_write.h"
#include "little_endian.h"
#include "sim_port.h"

namespace {

using blur::sim::SimPort;
constexpr uint32_t kBlockSize = 512;
constexpr uint32_t kBlocks = 4;
constexpr size_t kFlashSize = kBlockSize * kBlocks;
constexpr blur::Partition kPartition{0, kBlocks};
constexpr uint64_t kHighId = uint64_t{1} << 62;

blur::flash::Config config(uint32_t prog_size) {
  blur::flash::Config c = SimPort::default_flash_config(kBlocks);
  c.block_size = kBlockSize;
  c.prog_size = prog_size;
  return c;
}

// A small encoded report (its content does not matter to the queue).
size_t message(uint64_t id, uint8_t* out) {
  for (size_t i = 0; i < 24; ++i) out[i] = static_cast<uint8_t>(id + i);
  return 24;
}

const uint8_t* valid_image(uint32_t prog_size) {
  static uint8_t images[2][kFlashSize];
  static bool made[2] = {false, false};
  const int which = prog_size == 1 ? 0 : 1;
  if (!made[which]) {
    static uint8_t flash[kFlashSize];
    SimPort port(3, config(prog_size), flash);
    blur::ReportQueue queue;
    if (queue.open(port.port(), kPartition) != blur::Status::kOk) __builtin_trap();
    uint8_t bytes[32];
    for (uint64_t id = 0; id < 14; ++id) {
      if (queue.append(id, bytes, message(id, bytes)) != blur::Status::kOk) __builtin_trap();
      if (id % 5 == 4 && queue.acknowledge(id - 2) != blur::Status::kOk) __builtin_trap();
    }
    std::memcpy(images[which], port.flash(), kFlashSize);
    made[which] = true;
  }
  return images[which];
}

// Gives the records a scan would read a correct CRC: the acknowledgement
// records, each segment's header, and its entries as their lengths chain.
void fix_crcs(uint8_t* flash, const blur::Port& geometry) {
  const uint32_t ack_span = blur::record_span(geometry, 16);
  for (uint32_t b = 0; b < 2; ++b) {
    uint8_t* block = flash + b * kBlockSize;
    for (uint32_t at = 0; at + ack_span <= kBlockSize; at += ack_span) {
      blur::store_le32(block + at + blur::unit_align(geometry, 16), blur::crc32(block + at, 16));
    }
  }
  for (uint32_t b = 2; b < kBlocks; ++b) {
    uint8_t* block = flash + b * kBlockSize;
    blur::store_le32(block + blur::unit_align(geometry, 12), blur::crc32(block, 12));
    uint32_t at = blur::record_span(geometry, 12);
    while (at + 16 <= kBlockSize) {
      const uint32_t length = block[at + 2] | static_cast<uint32_t>(block[at + 3]) << 8;
      const uint32_t body = 16 + length;
      if (length == 0 || at + blur::record_span(geometry, body) > kBlockSize) break;
      blur::store_le32(block + at + blur::unit_align(geometry, body), blur::crc32(block + at, body));
      at += blur::record_span(geometry, body);
    }
  }
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
  if (flags & 4) {
    std::memcpy(port.flash(), valid_image(prog_size), kFlashSize);
    for (size_t i = 0; i < used; ++i) port.flash()[i] ^= data[i];
  } else {
    std::memcpy(port.flash(), data, used);
  }
  if (flags & 1) fix_crcs(port.flash(), port.port());

  blur::ReportQueue queue;
  if (queue.open(port.port(), kPartition) != blur::Status::kOk) {
    if (queue.is_open()) __builtin_trap();
    return 0;
  }
  static uint8_t batch[4096];
  size_t written = 0, count = 0;
  uint64_t last_id = 0;
  if (queue.pending_batch(1, blur::kMaxReportsPerBatch, batch, sizeof batch, &written, &count,
                          &last_id) != blur::Status::kOk ||
      count > queue.pending_count())
    __builtin_trap();
  uint8_t bytes[32];
  const blur::Status appended = queue.append(kHighId, bytes, message(kHighId, bytes));
  if (appended == blur::Status::kOk) {
    blur::ReportQueue reopened;
    if (reopened.open(port.port(), kPartition) != blur::Status::kOk ||
        reopened.pending_count() != queue.pending_count())
      __builtin_trap();
    if (queue.acknowledge(kHighId) == blur::Status::kOk) {
      blur::ReportQueue acknowledged;
      if (acknowledged.open(port.port(), kPartition) != blur::Status::kOk ||
          acknowledged.ack_floor() != kHighId + 1 || acknowledged.pending_count() != 0)
        __builtin_trap();
    }
  }
  return 0;
}
