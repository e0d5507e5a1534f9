// A decoded report batch, in the collector's own types.
#ifndef BLUR_COLLECTOR_INGEST_BATCH_H
#define BLUR_COLLECTOR_INGEST_BATCH_H

#include <cstdint>
#include <vector>

namespace blur::collector {

struct IncomingReport {
  uint64_t report_id = 0;
  uint32_t metric_id = 0;
  uint32_t mechanism = 0;  // raw wire value; validation maps it
  uint32_t epsilon_micros = 0;
  uint32_t domain_size = 0;
  bool has_bit = false;  // the payload is `bit`
  bool bit = false;
};

struct Batch {
  uint32_t sdk_version = 0;
  uint64_t device_nonce = 0;
  std::vector<IncomingReport> reports;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_BATCH_H
