#include "blur/report/report_encoding.h"

#include <gtest/gtest.h>
#include <string.h>

#include "blur.pb.h"
#include "blur/version.h"
#include "device_reports.h"
#include "kat.h"
#include "kat_report_batch.inc"  // kKatReportBatch: tests/vectors/report_batch.kat
#include "pb_decode.h"

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

}  // namespace
