#include "blur/report/report_encoding.h"

#include <gtest/gtest.h>
#include <string.h>

#include "blur.pb.h"
#include "blur/version.h"
#include "device_reports.h"
#include "kat.h"
#include "blur/discovery/fragment_puzzle.h"
#include "blur/storage/report_queue.h"
#include "kat_report_batch.inc"    // kKatReportBatch: tests/vectors/report_batch.kat
#include "kat_sfp_wire_forms.inc"  // kKatSfpWireForms: tests/vectors/sfp_wire_forms.kat
#include "pb_decode.h"
#include "sim_port.h"

namespace {

using blur::Status;

blur::Report to_report(const blur_test::KatReport& r) {
  blur::Report report = blur_test::scalar_report(r.report_id, r.metric_id,
                                                 static_cast<blur::MechanismId>(r.mechanism),
                                                 r.epsilon_micros, r.domain_size, r.value);
  report.payload.number = r.number;
  report.payload.seed = r.hash_a << 16 | r.hash_b;
  if (r.mechanism == 3 || r.mechanism == 4) {
    report.payload.bit_count = static_cast<uint16_t>(r.domain_size);
    memcpy(report.payload.bits, r.bits, r.bit_bytes);
  } else if (r.mechanism == 10) {
    report.payload.seed = r.value;  // the cohort
    report.payload.bit_count = static_cast<uint16_t>(8 * r.bit_bytes);
    memcpy(report.payload.bits, r.bits, r.bit_bytes);
  }
  return report;
}

// The encoder reproduces Google's protobuf encoding byte for byte.
TEST(ReportEncoding, MatchesKnownAnswers) {
  const size_t vectors = blur_test::for_each_kat(kKatReportBatch, [](const blur_test::KatBatch& v) {
    ASSERT_EQ(v.sdk_version, blur::kSdkVersion) << v.name;
    blur::Report reports[8];
    for (size_t i = 0; i < v.report_count; ++i) reports[i] = to_report(v.reports[i]);
    uint8_t buffer[512];
    size_t written = 0;
    ASSERT_EQ(blur::encode_batch(v.device_nonce, reports, v.report_count, buffer, sizeof buffer,
                                 &written),
              Status::kOk);
    ASSERT_EQ(written, v.encoding_size) << v.name;
    EXPECT_EQ(memcmp(buffer, v.encoding, written), 0) << v.name;
  });
  EXPECT_GE(vectors, 2u);
}

TEST(ReportEncoding, RoundTripsThroughTheNanopbDecoder) {
  blur::Report reports[3];
  for (uint32_t i = 0; i < 3; ++i) {
    reports[i] = blur_test::scalar_report(100 + i, 9, blur::MechanismId::kBinaryRandomizedResponse,
                                          750000, 2, i % 2 == 0);
  }
  uint8_t buffer[256];
  size_t written = 0;
  ASSERT_EQ(blur::encode_batch(42, reports, 3, buffer, sizeof buffer, &written), Status::kOk);
  static blur_ReportBatch decoded;
  decoded = blur_ReportBatch_init_zero;
  pb_istream_t stream = pb_istream_from_buffer(buffer, written);
  ASSERT_TRUE(pb_decode(&stream, blur_ReportBatch_fields, &decoded));
  EXPECT_EQ(decoded.device_nonce, 42u);
  EXPECT_EQ(decoded.sdk_version, blur::kSdkVersion);
  ASSERT_EQ(decoded.reports_count, 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(decoded.reports[i].report_id, 100u + i);
    EXPECT_EQ(decoded.reports[i].params.epsilon_micros, 750000u);
    EXPECT_EQ(decoded.reports[i].which_payload, blur_Report_bit_tag);
    EXPECT_EQ(decoded.reports[i].payload.bit, i % 2 == 0);
  }
}

TEST(ReportEncoding, RefusesBadCountsAndSmallBuffers) {
  blur::Report report = blur_test::scalar_report(1, 1, blur::MechanismId::kBinaryRandomizedResponse,
                                                 1000000, 2, true);
  uint8_t buffer[256];
  size_t written = 0;
  EXPECT_EQ(blur::encode_batch(1, &report, 0, buffer, sizeof buffer, &written),
            Status::kInvalidArgument);
  EXPECT_EQ(blur::encode_batch(1, &report, blur::kMaxReportsPerBatch + 1, buffer, sizeof buffer,
                               &written),
            Status::kInvalidArgument);
  EXPECT_EQ(blur::encode_batch(1, &report, 1, buffer, 10, &written), Status::kBufferTooSmall);
  // The documented bounds hold for the largest binary report.
  blur::Report largest =
      blur_test::scalar_report(UINT64_MAX, UINT32_MAX, blur::MechanismId::kBinaryRandomizedResponse,
                               UINT32_MAX, UINT32_MAX, true);
  ASSERT_EQ(blur::encode_batch(UINT64_MAX, &largest, 1, buffer, sizeof buffer, &written),
            Status::kOk);
  EXPECT_LE(written, blur::kBatchHeaderSize + blur::kMaxEncodedScalarReportSize);
}

// sfp's report (tests/vectors/sfp_wire_forms.kat) as the mechanism leaves
// it in a ReportPayload: packed as a local hash (FragmentPuzzleFields).
blur::Report sfp_report() {
  const blur::FragmentPuzzleFields fields{3, 517, 9, 700, 33};
  blur::Report report = blur_test::scalar_report(12, 12, blur::MechanismId::kSequenceFragmentPuzzle,
                                                 4000000, 16, fields.local_hash_bucket());
  report.payload.seed = fields.local_hash_a() << 16 | fields.local_hash_b();
  return report;
}

// sfp goes on the wire in its own message, byte for byte Google's encoding.
TEST(ReportEncoding, SfpIsEncodedAsFragmentPuzzlePayload) {
  uint8_t expected[128];
  const size_t expected_size =
      blur_test::named_hex_vector(kKatSfpWireForms, "fragment_puzzle_form", expected, sizeof expected);
  ASSERT_GT(expected_size, 0u);
  const blur::Report report = sfp_report();
  uint8_t buffer[128];
  size_t written = 0;
  ASSERT_EQ(blur::encode_batch(0x1234, &report, 1, buffer, sizeof buffer, &written), Status::kOk);
  ASSERT_EQ(written, expected_size);
  EXPECT_EQ(memcmp(buffer, expected, written), 0);
}

// A report an earlier SDK queued on flash in the local_hash form leaves the
// updated device unchanged, after a reboot, beside a report of the new form:
// the queue keeps encoded reports, and the collector accepts both forms
// (tests/collector/batch_decoder_test.cpp).
TEST(ReportEncoding, QueuedLocalHashFormIsSentAsItWas) {
  uint8_t old_batch[128], new_batch[128];
  const size_t old_size =
      blur_test::named_hex_vector(kKatSfpWireForms, "local_hash_form", old_batch, sizeof old_batch);
  const size_t new_size = blur_test::named_hex_vector(kKatSfpWireForms, "fragment_puzzle_form",
                                                      new_batch, sizeof new_batch);
  ASSERT_GT(old_size, 0u);
  ASSERT_GT(new_size, 0u);
  // A batch is the 12-byte header (sdk_version 256, device_nonce), then each
  // report as field 3: tag 0x1a, a one-byte length here, the report.
  constexpr size_t kHeader = 12;
  ASSERT_EQ(old_batch[kHeader], 0x1a);
  ASSERT_EQ(memcmp(old_batch, new_batch, kHeader), 0);
  const uint8_t* old_report = old_batch + kHeader + 2;
  const size_t old_report_size = old_batch[kHeader + 1];
  ASSERT_EQ(kHeader + 2 + old_report_size, old_size);

  blur::sim::SimPort port(7);
  const blur::Partition partition{2, 4};
  {
    blur::ReportQueue before_update;  // the earlier SDK's append
    ASSERT_EQ(before_update.open(port.port(), partition), Status::kOk);
    ASSERT_EQ(before_update.append(12, old_report, old_report_size), Status::kOk);
  }
  blur::ReportQueue queue;  // after the update
  ASSERT_EQ(queue.open(port.port(), partition), Status::kOk);
  uint8_t new_report[128];
  size_t new_report_size = 0;
  blur::Report report = sfp_report();
  report.report_id = 13;
  ASSERT_EQ(blur::encode_report(report, new_report, sizeof new_report, &new_report_size),
            Status::kOk);
  ASSERT_EQ(queue.append(13, new_report, new_report_size), Status::kOk);

  uint8_t batch[256];
  size_t written = 0, count = 0;
  uint64_t ack = 0;
  ASSERT_EQ(queue.pending_batch(0x1234, 64, batch, sizeof batch, &written, &count, &ack),
            Status::kOk);
  ASSERT_EQ(count, 2u);
  ASSERT_GE(written, old_size);
  EXPECT_EQ(memcmp(batch, old_batch, old_size), 0);  // the old report, bit for bit
  // then the new one in its new form (the KAT's report but for its id)
  EXPECT_EQ(batch[old_size], 0x1a);
  EXPECT_EQ(written - old_size, new_size - kHeader);
  EXPECT_EQ(memcmp(batch + old_size + 2, new_report, new_report_size), 0);
  EXPECT_EQ(memcmp(batch + old_size + 2 + 2, new_batch + kHeader + 2 + 2, new_report_size - 2), 0);
}

}  // namespace
