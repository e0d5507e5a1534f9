// Checks a decoded batch against the registered metrics: every report must
// name a registered metric and carry exactly that metric's mechanism,
// epsilon, domain and payload type; report ids must not repeat within the
// batch. One bad report rejects the whole batch (nothing is stored).
#ifndef BLUR_COLLECTOR_INGEST_BATCH_VALIDATOR_H
#define BLUR_COLLECTOR_INGEST_BATCH_VALIDATOR_H

#include <functional>
#include <optional>
#include <string>

#include "mechanisms/mechanism_spec.h"  // payload_shape_error: one report's payload
#include "model/incoming_report.h"
#include "model/metric_config.h"

namespace blur::collector {

using MetricLookup = std::function<std::optional<MetricConfig>(uint32_t metric_id)>;

// Empty string if valid, else a message naming the first problem and the
// report's position ("report 3 (id 17): ..."). If `unknown_metric` is given,
// it is set to whether that problem is a metric nobody registered (a
// configuration mismatch, counted apart from malformed batches).
std::string validate_batch(const Batch& batch, const MetricLookup& lookup,
                           bool* unknown_metric = nullptr);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_BATCH_VALIDATOR_H
