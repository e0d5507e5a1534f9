#include "blur/report/report_encoding.h"

#include <string.h>

#include "blur.pb.h"
#include "blur/version.h"
#include "pb_encode.h"
#include "little_endian.h"
#include "report_wire.h"

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
  return report_to_wire<kAllWireForms>(report, wire);
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
  return encode_report_with(&to_wire, report, buffer, capacity, written);
}

Status encode_report_with(ReportToWire to_wire, const Report& report, uint8_t* buffer,
                          size_t capacity, size_t* written) {
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

namespace {
// A batch's first bytes before the nonce: sdk_version's tag and varint,
// device_nonce's tag (both constant: no encoder needed at run time).
struct BatchPrefix {
  uint8_t bytes[7];
  size_t size;
};
constexpr BatchPrefix batch_prefix() {
  BatchPrefix p{};
  p.bytes[p.size++] = blur_ReportBatch_sdk_version_tag << 3 | PB_WT_VARINT;
  for (uint32_t v = kSdkVersion;; v >>= 7) {
    p.bytes[p.size++] = static_cast<uint8_t>(v >= 0x80 ? (v & 0x7F) | 0x80 : v);
    if (v < 0x80) break;
  }
  p.bytes[p.size++] = blur_ReportBatch_device_nonce_tag << 3 | PB_WT_64BIT;
  return p;
}
}  // namespace

Status begin_encoded_batch(uint64_t device_nonce, uint8_t* buffer, size_t capacity,
                           size_t* length) {
  if (length != nullptr) *length = 0;
  if (length == nullptr || buffer == nullptr) return Status::kInvalidArgument;
  constexpr BatchPrefix kPrefix = batch_prefix();
  if (capacity < kPrefix.size + 8) return Status::kBufferTooSmall;
  memcpy(buffer, kPrefix.bytes, kPrefix.size);
  store_le64(buffer + kPrefix.size, device_nonce);
  *length = kPrefix.size + 8;
  return Status::kOk;
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
