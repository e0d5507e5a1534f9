// A decoded report batch, in the collector's own types: a report as it
// arrived (IncomingReport) and its batch.
#ifndef BLUR_COLLECTOR_MODEL_INCOMING_REPORT_H
#define BLUR_COLLECTOR_MODEL_INCOMING_REPORT_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blur/mechanisms/mechanism.h"

namespace blur::collector {

struct IncomingReport {
  uint64_t report_id = 0;
  uint32_t metric_id = 0;
  uint32_t mechanism = 0;  // raw wire value; validation maps it
  uint32_t epsilon_micros = 0;
  uint32_t domain_size = 0;
  uint32_t longitudinal_epsilon_micros = 0;  // memoized reports; 0: absent (one-shot)
  bool has_payload = false;  // false: the report carried no payload field
  blur::PayloadKind payload = blur::PayloadKind::kBit;  // which field it carried
  uint32_t value = 0;   // the bit (0/1), the index, the bucket (local hashing), the cohort (Bloom)
  std::string bits;     // the bit vector (unary encodings, Bloom filter)
  int64_t number = 0;   // the noisy number (discrete Laplace), grid units
  uint32_t hash_a = 0;  // local hashing: the seed (a, b)
  uint32_t hash_b = 0;
  uint32_t observed_minute = 0;  // the device clock's minutes; 0: absent
};

struct Batch {
  uint32_t sdk_version = 0;
  uint64_t device_nonce = 0;
  std::vector<IncomingReport> reports;
  // Not on the wire: when the sending device first enrolled (Unix s), set
  // by the API for an authenticated device that enrolled with a key; for
  // the quarantine of new devices (MetricConfig::quarantine_seconds).
  std::optional<int64_t> enrolled_at;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MODEL_INCOMING_REPORT_H
