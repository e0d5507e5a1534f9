// A Report as nanopb's blur_Report, for the payload forms a build puts on
// the wire: libblur_sdk's encode_report converts every form; a Client
// converts only those of its mechanisms (built_wire_forms(), mechanism.h),
// so firmware carries no conversion it cannot use.
#ifndef BLUR_SRC_REPORT_WIRE_H
#define BLUR_SRC_REPORT_WIRE_H

#include <stddef.h>
#include <string.h>

#include "blur.pb.h"
#include "blur/discovery/fragment_puzzle.h"
#include "blur/report/report.h"
#include "blur/report/report_encoding.h"

namespace blur {

inline constexpr uint32_t kAllWireForms = 0x3Fu | kFragmentPuzzleWire;

template <uint32_t kForms>
constexpr bool wire_form(PayloadKind kind) {
  return (kForms & 1u << static_cast<unsigned>(kind)) != 0;
}

// false for a payload outside kForms (or a bit vector longer than this
// build's largest).
template <uint32_t kForms>
bool report_to_wire(const Report& report, blur_Report* wire) {
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
      if constexpr (wire_form<kForms>(PayloadKind::kBit)) {
        wire->which_payload = blur_Report_bit_tag;
        wire->payload.bit = report.payload.value != 0;
        return true;
      }
      break;
    case PayloadKind::kIndex:
      if constexpr (wire_form<kForms>(PayloadKind::kIndex)) {
        wire->which_payload = blur_Report_index_tag;
        wire->payload.index = report.payload.value;
        return true;
      }
      break;
    case PayloadKind::kLocalHash:
      if constexpr ((kForms & kFragmentPuzzleWire) != 0) {
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
      }
      if constexpr (wire_form<kForms>(PayloadKind::kLocalHash)) {
        wire->which_payload = blur_Report_local_hash_tag;
        wire->payload.local_hash.a = report.payload.seed >> 16;
        wire->payload.local_hash.b = report.payload.seed & 0xFFFFu;
        wire->payload.local_hash.bucket = report.payload.value;
        return true;
      }
      break;
    case PayloadKind::kNumber:
      if constexpr (wire_form<kForms>(PayloadKind::kNumber)) {
        wire->which_payload = blur_Report_value_tag;
        wire->payload.value = report.payload.number;
        return true;
      }
      break;
    case PayloadKind::kBits:
      if constexpr (wire_form<kForms>(PayloadKind::kBits)) {
        const size_t bytes = (report.payload.bit_count + 7u) / 8u;
        if (bytes > kMaxBitVectorBytes) return false;
        wire->which_payload = blur_Report_bits_tag;
        wire->payload.bits.size = static_cast<pb_size_t>(bytes);
        memcpy(wire->payload.bits.bytes, report.payload.bits, bytes);
        return true;
      }
      break;
    case PayloadKind::kBloom:
      if constexpr (wire_form<kForms>(PayloadKind::kBloom)) {
        const size_t bytes = (report.payload.bit_count + 7u) / 8u;
        if (bytes > kMaxBitVectorBytes) return false;
        wire->which_payload = blur_Report_bloom_tag;
        wire->payload.bloom.cohort = report.payload.seed;
        wire->payload.bloom.bits.size = static_cast<pb_size_t>(bytes);
        memcpy(wire->payload.bloom.bits.bytes, report.payload.bits, bytes);
        return true;
      }
      break;
  }
  return false;
}

// encode_report with a chosen conversion (report_to_wire<forms>).
using ReportToWire = bool (*)(const Report& report, blur_Report* wire);
Status encode_report_with(ReportToWire to_wire, const Report& report, uint8_t* buffer,
                          size_t capacity, size_t* written);

}  // namespace blur

#endif  // BLUR_SRC_REPORT_WIRE_H
