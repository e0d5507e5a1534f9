#include "blur/storage/report_queue.h"

#include <gtest/gtest.h>
#include <string.h>

#include "blur/report/report_encoding.h"
#include "blur/storage/crc32.h"
#include "device_reports.h"
#include "flash_write.h"
#include "little_endian.h"
#include "sim_port.h"

namespace {

using blur::ReportQueue;
using blur::Status;
using blur::sim::SimPort;

constexpr uint32_t kFirstBlock = 2, kBlocks = 4;

blur::Report report(uint64_t id) {
  return blur_test::scalar_report(id, 3, blur::MechanismId::kGeneralizedRandomizedResponse, 1000000,
                                  1000, static_cast<uint32_t>(id * 7 % 1000));
}

Status append(ReportQueue& queue, uint64_t id) {
  uint8_t message[64];
  size_t size = 0;
  BLUR_TRY(blur::encode_report(report(id), message, sizeof message, &size));
  BLUR_TRY(queue.has_room(size));
  return queue.append(id, message, size);
}

// The pending batch is byte for byte encode_batch() of the pending reports.
void expect_pending(const ReportQueue& queue, uint64_t first, uint64_t last) {
  static uint8_t batch[4096], expected[4096];
  size_t written = 0, count = 0;
  uint64_t last_id = 0;
  ASSERT_EQ(queue.pending_batch(99, blur::kMaxReportsPerBatch, batch, sizeof batch, &written,
                                &count, &last_id),
            Status::kOk);
  ASSERT_EQ(count, last - first + 1);
  EXPECT_EQ(last_id, last);
  static blur::Report reports[blur::kMaxReportsPerBatch];
  for (uint64_t id = first; id <= last; ++id) reports[id - first] = report(id);
  size_t expected_size = 0;
  ASSERT_EQ(blur::encode_batch(99, reports, count, expected, sizeof expected, &expected_size),
            Status::kOk);
  ASSERT_EQ(written, expected_size);
  EXPECT_EQ(memcmp(batch, expected, written), 0);
}

TEST(ReportQueue, AppendPendingAcknowledgeAndReopen) {
  SimPort port(1);
  ReportQueue queue;
  ASSERT_EQ(queue.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  EXPECT_EQ(queue.pending_count(), 0u);
  for (uint64_t id = 0; id < 10; ++id) ASSERT_EQ(append(queue, id), Status::kOk);
  expect_pending(queue, 0, 9);
  ASSERT_EQ(queue.acknowledge(3), Status::kOk);
  EXPECT_EQ(queue.pending_count(), 6u);
  expect_pending(queue, 4, 9);

  ReportQueue rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  EXPECT_EQ(rebooted.pending_count(), 6u);
  EXPECT_EQ(rebooted.ack_floor(), 4u);
  expect_pending(rebooted, 4, 9);
  // Ids must increase; acknowledging what is already acknowledged is a no-op.
  EXPECT_EQ(append(rebooted, 9), Status::kInvalidArgument);
  EXPECT_EQ(rebooted.acknowledge(2), Status::kOk);
  EXPECT_EQ(rebooted.acknowledge(10), Status::kInvalidArgument);  // never appended
  ASSERT_EQ(rebooted.acknowledge(9), Status::kOk);
  EXPECT_EQ(rebooted.pending_count(), 0u);
  size_t written = 0, count = 7;
  uint64_t last_id = 0;
  uint8_t batch[64];
  ASSERT_EQ(rebooted.pending_batch(99, 64, batch, sizeof batch, &written, &count, &last_id),
            Status::kOk);
  EXPECT_EQ(count, 0u);
}

// A full queue refuses before anything is written; acknowledged segments
// are reused, so the queue runs forever in bounded flash.
TEST(ReportQueue, FullQueueRefusesAndAcknowledgementFreesSegments) {
  SimPort port(1);
  ReportQueue queue;
  ASSERT_EQ(queue.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  uint64_t id = 0;
  Status status = Status::kOk;
  while ((status = append(queue, id)) == Status::kOk) ++id;
  EXPECT_EQ(status, Status::kQueueFull);
  const uint64_t capacity = id;
  EXPECT_GE(capacity, 2u * 12);  // two segments of 12 ~40-byte entries
  const uint64_t operations = port.storage_operations();
  EXPECT_EQ(queue.has_room(20), Status::kQueueFull);
  EXPECT_EQ(port.storage_operations(), operations);
  for (int round = 0; round < 5; ++round) {
    ASSERT_EQ(queue.acknowledge(id - 1), Status::kOk);
    EXPECT_EQ(queue.pending_count(), 0u);
    const uint64_t start = id;
    while (append(queue, id) == Status::kOk) ++id;
    // Reports differ in size by a byte or two, so a round may fit one fewer.
    EXPECT_GE(id - start + 1, capacity) << "round " << round;
    EXPECT_LE(id - start, capacity + 1) << "round " << round;
    expect_pending(queue, start, id - 1);  // all there, oldest first
  }
  EXPECT_EQ(queue.has_room(queue.max_report_size() + 1), Status::kInvalidArgument);
}

// A torn append (power cut inside it) leaves no pending entry; the next
// append goes to a fresh segment and everything before survives.
TEST(ReportQueue, TornAppendIsDroppedAndTheLogContinues) {
  for (uint64_t cut = 0; cut < 8; ++cut) {
    SimPort port(1);
    ReportQueue queue;
    ASSERT_EQ(queue.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
    for (uint64_t id = 0; id < 5; ++id) ASSERT_EQ(append(queue, id), Status::kOk);
    port.cut_power_after(cut, cut);
    Status status = Status::kOk;
    uint64_t id = 5;
    while (status == Status::kOk) status = append(queue, id++);
    EXPECT_EQ(status, Status::kStorageFailure);
    port.restore_power();
    ReportQueue rebooted;
    ASSERT_EQ(rebooted.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
    const uint64_t kept = rebooted.pending_count();
    EXPECT_GE(kept, 5u);
    EXPECT_LE(kept, id - 1);
    expect_pending(rebooted, 0, kept - 1);
    ASSERT_EQ(append(rebooted, id), Status::kOk);
    EXPECT_EQ(rebooted.pending_count(), kept + 1);
  }
}

TEST(ReportQueue, RejectsBadRanges) {
  SimPort port(1);
  ReportQueue queue;
  EXPECT_EQ(queue.open(port.port(), blur::Partition{2, 1}), Status::kInvalidArgument);
  EXPECT_EQ(queue.open(port.port(), blur::Partition{5, 2}), Status::kInvalidArgument);
  EXPECT_EQ(append(queue, 0), Status::kInvalidArgument);  // not open
}

// Segments wear out (the flash refuses programs after kCycles erases): an
// append that meets a worn segment says so (kStorageWornOut) and the queue
// closes; reports appended before are still there after a reboot, none lost.
TEST(ReportQueue, AWornSegmentFailsClosedAndKeepsWhatWasQueued) {
  constexpr uint32_t kCycles = 3;
  static uint8_t flash[SimPort::kBlockSize * SimPort::kBlockCount];
  static uint32_t erase_counts[SimPort::kBlockCount];
  blur::flash::Config config = SimPort::default_flash_config();
  config.erase_cycles = kCycles;
  SimPort port(1, config, flash, erase_counts);
  ReportQueue queue;
  ASSERT_EQ(queue.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  uint64_t id = 0;
  Status status = Status::kOk;
  uint64_t acknowledged_below = 0;
  while ((status = append(queue, id)) == Status::kOk) {
    ++id;
    if (id % 8 == 0) {
      if ((status = queue.acknowledge(id - 5)) != Status::kOk) break;  // keep 4 pending
      acknowledged_below = id - 4;
    }
    ASSERT_LT(id, 10000u) << "the segments never wore out";
  }
  EXPECT_EQ(status, Status::kStorageWornOut) << blur::status_name(status);
  EXPECT_FALSE(queue.is_open());
  ReportQueue rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  EXPECT_GE(rebooted.ack_floor(), acknowledged_below);
  expect_pending(rebooted, rebooted.ack_floor(), id - 1);  // every unacknowledged report
}

// Report ids on flash that do not increase (corruption, a forged image):
// the queue takes the largest as the last one, so an append can never reuse
// an id that is still pending. Found by report_queue_storage_fuzz.
TEST(ReportQueue, TheLargestIdOnFlashBoundsTheNextAppend) {
  SimPort port(1);
  ReportQueue queue;
  ASSERT_EQ(queue.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  ASSERT_EQ(append(queue, 5), Status::kOk);
  ASSERT_EQ(append(queue, 6), Status::kOk);
  // The first entry of the first segment now says id 100 (its CRC made valid).
  const blur::Port p = port.port();
  uint8_t* entry = port.flash() + (kFirstBlock + 2) * SimPort::kBlockSize + blur::record_span(p, 12);
  const uint32_t body = 16 + (entry[2] | static_cast<uint32_t>(entry[3]) << 8);
  blur::store_le64(entry + 8, 100);
  blur::store_le32(entry + blur::unit_align(p, body), blur::crc32(entry, body));
  ReportQueue rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::Partition{kFirstBlock, kBlocks}), Status::kOk);
  EXPECT_EQ(rebooted.pending_count(), 2u);
  EXPECT_EQ(append(rebooted, 50), Status::kInvalidArgument);
  EXPECT_EQ(append(rebooted, 101), Status::kOk);
}

}  // namespace
