// Checks a decoded batch against the registered metrics: every report must
// name a registered metric and carry exactly that metric's mechanism,
// epsilon, domain and payload type; report ids must not repeat within the
// batch. One bad report rejects the whole batch (nothing is stored).
#ifndef BLUR_COLLECTOR_INGEST_BATCH_VALIDATOR_H
#define BLUR_COLLECTOR_INGEST_BATCH_VALIDATOR_H

#include <functional>
#include <optional>
#include <string>

#include "ingest/batch.h"
#include "metrics/metric_config.h"

namespace blur::collector {

using MetricLookup = std::function<std::optional<MetricConfig>(uint32_t metric_id)>;

// Empty string if the report's payload has the metric's kind and every
// field is within its shape (an index in the domain, a bit vector of the
// right length, a hash seed, level and bucket of the family, ...), else
// what is wrong. The batch validator and the reader of stored raw reports
// both ask it, so nothing outside the shape reaches an aggregate.
std::string payload_shape_error(const MetricConfig& metric, const IncomingReport& report);

// Empty string if valid, else a message naming the first problem and the
// report's position ("report 3 (id 17): ..."). If `unknown_metric` is given,
// it is set to whether that problem is a metric nobody registered (a
// configuration mismatch, counted apart from malformed batches).
std::string validate_batch(const Batch& batch, const MetricLookup& lookup,
                           bool* unknown_metric = nullptr);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_BATCH_VALIDATOR_H
