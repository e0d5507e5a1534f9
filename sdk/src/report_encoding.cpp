#include "blur/report/report_encoding.h"

#include <string.h>

#include "blur.pb.h"
#include "blur/discovery/fragment_puzzle.h"
#include "blur/version.h"
#include "pb_encode.h"

namespace blur {

namespace {

// The mechanism table and blur.proto's enum name the same values.
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain)                   \
  static_assert(static_cast<int>(MechanismId::k##Cpp) == blur_Mechanism_MECHANISM_##PROTO, \
                "mechanism_table.h and blur.proto disagree on " #name);
BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
static_assert(_blur_Mechanism_MAX == static_cast<int>(kMechanismCount),
              "blur.proto has a mechanism that mechanism_table.h lacks");
static_assert(kMaxBitVectorBytes <= sizeof(blur_Report_bits_t::bytes),
              "BLUR_MAX_BIT_VECTOR_BYTES must not exceed blur.options' Report.bits max_size");
static_assert(kMaxBitVectorBytes <= sizeof(blur_BloomPayload_bits_t::bytes),
              "BLUR_MAX_BIT_VECTOR_BYTES must not exceed blur.options' BloomPayload.bits max_size");
static_assert(kMaxReportsPerBatch == sizeof(blur_ReportBatch::reports) / sizeof(blur_Report),
              "kMaxReportsPerBatch must match blur.options");

bool to_wire(const Report& report, blur_Report* wire) {
  *wire = blur_Report_init_zero;
  wire->report_id = report.report_id;
  wire->metric_id = report.metric_id;
  wire->params.mechanism = static_cast<uint32_t>(report.mechanism);
  wire->params.epsilon_micros = report.epsilon_micros;
  wire->params.domain_size = report.domain_size;
  if (report.longitudinal_epsilon_micros != 0) {
    wire->params.has_longitudinal_epsilon_micros = true;
    wire->params.longitudinal_epsilon_micros = report.longitudinal_epsilon_micros;
  }
  if (report.observed_minute != 0) {
    wire->has_observed_minute = true;
    wire->observed_minute = report.observed_minute;
  }
  switch (mechanism_payload(report.mechanism)) {
    case PayloadKind::kBit:
      wire->which_payload = blur_Report_bit_tag;
      wire->payload.bit = report.payload.value != 0;
      return true;
    case PayloadKind::kIndex:
      wire->which_payload = blur_Report_index_tag;
      wire->payload.index = report.payload.value;
      return true;
    case PayloadKind::kLocalHash:
      if (report.mechanism == MechanismId::kSequenceFragmentPuzzle) {
        // Its own message on the wire; packed as a local hash inside the
        // device (FragmentPuzzleFields).
        const auto fields = FragmentPuzzleFields::from_local_hash(
            report.payload.seed >> 16, report.payload.seed & 0xFFFFu, report.payload.value);
        wire->which_payload = blur_Report_fragment_puzzle_tag;
        wire->payload.fragment_puzzle.word_seed = fields.word_seed;
        wire->payload.fragment_puzzle.word_bucket = fields.word_bucket;
        wire->payload.fragment_puzzle.position = fields.position;
        wire->payload.fragment_puzzle.fragment_seed = fields.fragment_seed;
        wire->payload.fragment_puzzle.fragment_bucket = fields.fragment_bucket;
        return true;
      }
      wire->which_payload = blur_Report_local_hash_tag;
      wire->payload.local_hash.a = report.payload.seed >> 16;
      wire->payload.local_hash.b = report.payload.seed & 0xFFFFu;
      wire->payload.local_hash.bucket = report.payload.value;
      return true;
    case PayloadKind::kNumber:
      wire->which_payload = blur_Report_value_tag;
      wire->payload.value = report.payload.number;
      return true;
    case PayloadKind::kBits: {
      const size_t bytes = (report.payload.bit_count + 7u) / 8u;
      if (bytes > kMaxBitVectorBytes) return false;
      wire->which_payload = blur_Report_bits_tag;
      wire->payload.bits.size = static_cast<pb_size_t>(bytes);
      memcpy(wire->payload.bits.bytes, report.payload.bits, bytes);
      return true;
    }
    case PayloadKind::kBloom: {
      const size_t bytes = (report.payload.bit_count + 7u) / 8u;
      if (bytes > kMaxBitVectorBytes) return false;
      wire->which_payload = blur_Report_bloom_tag;
      wire->payload.bloom.cohort = report.payload.seed;
      wire->payload.bloom.bits.size = static_cast<pb_size_t>(bytes);
      memcpy(wire->payload.bloom.bits.bytes, report.payload.bits, bytes);
      return true;
    }
  }
  return false;
}

// Writes the batch field by field: header, then one submessage per report.
bool encode(pb_ostream_t* stream, uint64_t device_nonce, const Report* reports, size_t count) {
  if (!pb_encode_tag(stream, PB_WT_VARINT, blur_ReportBatch_sdk_version_tag) ||
      !pb_encode_varint(stream, kSdkVersion) ||
      !pb_encode_tag(stream, PB_WT_64BIT, blur_ReportBatch_device_nonce_tag) ||
      !pb_encode_fixed64(stream, &device_nonce)) {
    return false;
  }
  for (size_t i = 0; i < count; ++i) {
    blur_Report wire;
    if (!to_wire(reports[i], &wire) ||
        !pb_encode_tag(stream, PB_WT_STRING, blur_ReportBatch_reports_tag) ||
        !pb_encode_submessage(stream, blur_Report_fields, &wire)) {
      return false;
    }
  }
  return true;
}

}  // namespace

Status encode_batch(uint64_t device_nonce, const Report* reports, size_t count, uint8_t* buffer,
                    size_t capacity, size_t* written) {
  if (reports == nullptr || count == 0 || count > kMaxReportsPerBatch || written == nullptr ||
      (buffer == nullptr && capacity > 0)) {
    return Status::kInvalidArgument;
  }
  pb_ostream_t sizing = PB_OSTREAM_SIZING;
  if (!encode(&sizing, device_nonce, reports, count)) return Status::kEncodingFailure;
  if (sizing.bytes_written > capacity) return Status::kBufferTooSmall;
  pb_ostream_t stream = pb_ostream_from_buffer(buffer, capacity);
  if (!encode(&stream, device_nonce, reports, count)) return Status::kEncodingFailure;
  *written = stream.bytes_written;
  return Status::kOk;
}

Status encode_report(const Report& report, uint8_t* buffer, size_t capacity, size_t* written) {
  if (written == nullptr || (buffer == nullptr && capacity > 0)) return Status::kInvalidArgument;
  blur_Report wire;
  if (!to_wire(report, &wire)) return Status::kEncodingFailure;
  pb_ostream_t sizing = PB_OSTREAM_SIZING;
  if (!pb_encode(&sizing, blur_Report_fields, &wire)) return Status::kEncodingFailure;
  if (sizing.bytes_written > capacity) return Status::kBufferTooSmall;
  pb_ostream_t stream = pb_ostream_from_buffer(buffer, capacity);
  if (!pb_encode(&stream, blur_Report_fields, &wire)) return Status::kEncodingFailure;
  *written = stream.bytes_written;
  return Status::kOk;
}

namespace {
// Appends with `write` at *length, or changes nothing if it does not fit.
template <typename Write>
Status append_fields(uint8_t* buffer, size_t capacity, size_t* length, Write write) {
  if (length == nullptr || buffer == nullptr || *length > capacity) return Status::kInvalidArgument;
  pb_ostream_t sizing = PB_OSTREAM_SIZING;
  if (!write(&sizing)) return Status::kEncodingFailure;
  if (sizing.bytes_written > capacity - *length) return Status::kBufferTooSmall;
  pb_ostream_t stream = pb_ostream_from_buffer(buffer + *length, capacity - *length);
  if (!write(&stream)) return Status::kEncodingFailure;
  *length += stream.bytes_written;
  return Status::kOk;
}
}  // namespace

Status begin_encoded_batch(uint64_t device_nonce, uint8_t* buffer, size_t capacity,
                           size_t* length) {
  if (length != nullptr) *length = 0;
  return append_fields(buffer, capacity, length, [&](pb_ostream_t* stream) {
    return pb_encode_tag(stream, PB_WT_VARINT, blur_ReportBatch_sdk_version_tag) &&
           pb_encode_varint(stream, kSdkVersion) &&
           pb_encode_tag(stream, PB_WT_64BIT, blur_ReportBatch_device_nonce_tag) &&
           pb_encode_fixed64(stream, &device_nonce);
  });
}

Status append_encoded_report(const uint8_t* report, size_t report_size, uint8_t* buffer,
                             size_t capacity, size_t* length) {
  if (report == nullptr) return Status::kInvalidArgument;
  return append_fields(buffer, capacity, length, [&](pb_ostream_t* stream) {
    return pb_encode_tag(stream, PB_WT_STRING, blur_ReportBatch_reports_tag) &&
           pb_encode_string(stream, report, report_size);
  });
}

}  // namespace blur
