// Encodes reports into a ReportBatch (sdk/proto/blur.proto) in a buffer the
// caller owns. The batch message is written field by field, so no batch
// struct is ever materialized: stack use is one report at a time.
#ifndef BLUR_REPORT_ENCODING_H
#define BLUR_REPORT_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "blur/report/report.h"
#include "blur/status.h"

namespace blur {

// The collector's decoder accepts at most this many reports per batch
// (blur.options: ReportBatch.reports max_count).
inline constexpr size_t kMaxReportsPerBatch = 64;

// Upper bound of one encoded report with a scalar payload (bit, index or
// local hash) inside a batch, in bytes: field header 2, report_id 11,
// metric_id 6, params 26 (with the longitudinal epsilon), payload 14 (a
// local hash), observed_minute 6 = 65.
inline constexpr size_t kMaxEncodedScalarReportSize = 65;
// Upper bound of any one encoded report (a full bit vector) in a batch.
// (A Bloom payload adds its cohort: tag + varint32 + submessage header.)
inline constexpr size_t kMaxEncodedReportSize =
    kMaxEncodedScalarReportSize + 12 + kMaxBitVectorBytes;
// Batch header: sdk_version (tag + varint32) + device_nonce (tag + fixed64).
inline constexpr size_t kBatchHeaderSize = 1 + 5 + 1 + 8;

// Writes a batch of `count` reports (1..kMaxReportsPerBatch) into
// buffer[0..capacity); *written gets the encoded length.
// kBufferTooSmall if it does not fit; kInvalidArgument for a bad count.
Status encode_batch(uint64_t device_nonce, const Report* reports, size_t count, uint8_t* buffer,
                    size_t capacity, size_t* written);

// One report as a blur.Report message (what the report queue stores).
Status encode_report(const Report& report, uint8_t* buffer, size_t capacity, size_t* written);

// A batch assembled from encoded reports: start with the header, then add
// each report's message. The bytes equal encode_batch() of the same reports.
// Each call appends at *length; kBufferTooSmall leaves *length unchanged.
Status begin_encoded_batch(uint64_t device_nonce, uint8_t* buffer, size_t capacity,
                           size_t* length);
Status append_encoded_report(const uint8_t* report, size_t report_size, uint8_t* buffer,
                             size_t capacity, size_t* length);

}  // namespace blur

#endif  // BLUR_REPORT_ENCODING_H
