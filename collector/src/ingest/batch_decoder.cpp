#include "ingest/batch_decoder.h"

#include <memory>

#include "blur.pb.h"
#include "blur/discovery/fragment_puzzle.h"
#include "pb_decode.h"

namespace blur::collector {

size_t max_encoded_batch_size() { return blur_ReportBatch_size; }

size_t device_nonce_offset(const uint8_t* data, size_t size) {
  size_t i = 0;
  if (size > 0 && data[0] == 0x08) {  // field 1, a varint: bytes 1..10 at most
    i = 1;
    while (i < size && i < 11 && (data[i] & 0x80) != 0) ++i;
    if (i >= size || i >= 11) return 0;  // truncated, or longer than a varint
    ++i;  // past its last byte
  }
  if (i >= size || data[i] != 0x11) return 0;  // field 2, fixed64
  return i + 9 <= size ? i + 1 : 0;
}

std::optional<uint64_t> leading_device_nonce(const uint8_t* data, size_t size) {
  const size_t offset = device_nonce_offset(data, size);
  if (offset == 0) return std::nullopt;
  uint64_t nonce = 0;
  for (int i = 7; i >= 0; --i) nonce = nonce << 8 | data[offset + static_cast<size_t>(i)];
  return nonce;
}

bool decode_batch(const uint8_t* data, size_t size, Batch* batch, std::string* error) {
  if (size > max_encoded_batch_size()) {
    *error = "body of " + std::to_string(size) + " bytes exceeds the largest valid batch (" +
             std::to_string(max_encoded_batch_size()) + " bytes)";
    return false;
  }
  // ~35 KB: on the heap, not the server thread's stack, and once per
  // thread: pb_decode() sets every field to its default itself (a repeated
  // field's count to 0, each decoded element whole), so nothing of the
  // previous batch shows through and a one-report batch does not pay for
  // allocating and clearing 64 reports.
  thread_local const std::unique_ptr<blur_ReportBatch> reused(new blur_ReportBatch);
  blur_ReportBatch* const wire = reused.get();
  pb_istream_t stream = pb_istream_from_buffer(data, size);
  if (!pb_decode(&stream, blur_ReportBatch_fields, wire)) {
    *error = std::string("malformed protobuf batch: ") + PB_GET_ERROR(&stream);
    return false;
  }
  Batch decoded;
  decoded.sdk_version = wire->sdk_version;
  decoded.device_nonce = wire->device_nonce;
  decoded.reports.reserve(wire->reports_count);
  for (pb_size_t i = 0; i < wire->reports_count; ++i) {
    const blur_Report& r = wire->reports[i];
    IncomingReport report;
    report.report_id = r.report_id;
    report.metric_id = r.metric_id;
    report.mechanism = r.params.mechanism;
    report.epsilon_micros = r.params.epsilon_micros;
    report.domain_size = r.params.domain_size;
    if (r.params.has_longitudinal_epsilon_micros) {
      report.longitudinal_epsilon_micros = r.params.longitudinal_epsilon_micros;
    }
    report.observed_minute = r.has_observed_minute ? r.observed_minute : 0;
    report.has_payload = true;
    switch (r.which_payload) {
      case blur_Report_bit_tag:
        report.payload = PayloadKind::kBit;
        report.value = r.payload.bit ? 1 : 0;
        break;
      case blur_Report_index_tag:
        report.payload = PayloadKind::kIndex;
        report.value = r.payload.index;
        break;
      case blur_Report_bits_tag:
        report.payload = PayloadKind::kBits;
        report.bits.assign(reinterpret_cast<const char*>(r.payload.bits.bytes),
                           r.payload.bits.size);
        break;
      case blur_Report_local_hash_tag:
        report.payload = PayloadKind::kLocalHash;
        report.hash_a = r.payload.local_hash.a;
        report.hash_b = r.payload.local_hash.b;
        report.value = r.payload.local_hash.bucket;
        break;
      case blur_Report_fragment_puzzle_tag: {
        // IncomingReport keeps sfp's fields packed as a local hash, the form
        // earlier SDKs sent (local_hash_tag above): both forms decode alike.
        const auto& wire_fields = r.payload.fragment_puzzle;
        const blur::FragmentPuzzleFields fields{wire_fields.position, wire_fields.fragment_seed,
                                          wire_fields.fragment_bucket, wire_fields.word_seed,
                                          wire_fields.word_bucket};
        if (!fields.packable()) {
          *error = "report " + std::to_string(i) + ": a fragment_puzzle field exceeds its range";
          return false;
        }
        report.payload = PayloadKind::kLocalHash;
        report.hash_a = fields.local_hash_a();
        report.hash_b = fields.local_hash_b();
        report.value = fields.local_hash_bucket();
        break;
      }
      case blur_Report_bloom_tag:
        report.payload = PayloadKind::kBloom;
        report.value = r.payload.bloom.cohort;
        report.bits.assign(reinterpret_cast<const char*>(r.payload.bloom.bits.bytes),
                           r.payload.bloom.bits.size);
        break;
      case blur_Report_value_tag:
        report.payload = PayloadKind::kNumber;
        report.number = r.payload.value;
        break;
      default:  // no payload (nanopb sets only the tags it knows)
        report.has_payload = false;
        break;
    }
    decoded.reports.push_back(report);
  }
  *batch = std::move(decoded);
  return true;
}

}  // namespace blur::collector
