#include "aggregate/payload.h"

#include "mechanisms/mechanism_spec.h"
#include "util/varint.h"

namespace blur::collector {

std::string flatten_payload(const IncomingReport& report) {
  std::string out;
  switch (report.payload) {
    case PayloadKind::kBit:
    case PayloadKind::kIndex:
      put_varint(&out, report.value);
      break;
    case PayloadKind::kNumber:
      put_varint(&out, zigzag(report.number));
      break;
    case PayloadKind::kLocalHash:
      put_varint(&out, report.hash_a);
      put_varint(&out, report.hash_b);
      put_varint(&out, report.value);
      break;
    case PayloadKind::kBits:
      out = report.bits;
      break;
    case PayloadKind::kBloom:
      put_varint(&out, report.value);
      out += report.bits;
      break;
  }
  return out;
}

namespace {
bool read_u32(VarintReader& reader, uint32_t* value) {
  uint64_t v = 0;
  if (!reader.next(&v) || v > UINT32_MAX) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}
bool read_payload(const MetricConfig& metric, std::string_view bytes, IncomingReport* report) {
  VarintReader reader(bytes);
  report->payload = blur::mechanism_payload(metric.mechanism);
  report->has_payload = true;
  switch (report->payload) {
    case PayloadKind::kBit:
    case PayloadKind::kIndex:
      return read_u32(reader, &report->value) && reader.done();
    case PayloadKind::kNumber: {
      uint64_t v = 0;
      if (!reader.next(&v) || !reader.done()) return false;
      report->number = unzigzag(v);
      return true;
    }
    case PayloadKind::kLocalHash:
      return read_u32(reader, &report->hash_a) && read_u32(reader, &report->hash_b) &&
             read_u32(reader, &report->value) && reader.done();
    case PayloadKind::kBits:
      report->bits.assign(bytes);
      return true;
    case PayloadKind::kBloom:
      if (!read_u32(reader, &report->value)) return false;
      report->bits.assign(reader.rest());
      return true;
  }
  return false;
}

}  // namespace

bool unflatten_payload(const MetricConfig& metric, std::string_view bytes, IncomingReport* report) {
  // Stored bytes are untrusted: read, then held to the metric's shape like
  // a report arriving (an out-of-shape index would address outside a tally).
  return read_payload(metric, bytes, report) && payload_shape_error(metric, *report).empty();
}

}  // namespace blur::collector
