// The rules a metric configuration must meet against its mechanism, and
// its text forms: the operator's "ID:MECHANISM:EPSILON..." spec and the
// canonical JSON the store keeps and compares on restart. Above the
// mechanism specs (mechanisms/), which say what each mechanism allows.
#ifndef BLUR_COLLECTOR_CONFIG_METRIC_RULES_H
#define BLUR_COLLECTOR_CONFIG_METRIC_RULES_H

#include <string>

#include "model/metric_config.h"
#include "util/outcome.h"

namespace blur::collector {

bool operator==(const MetricConfig& a, const MetricConfig& b);
inline bool operator!=(const MetricConfig& a, const MetricConfig& b) { return !(a == b); }

// The first field that differs, "name: A -> B" (empty when equal): a changed
// metric is refused with this.
std::string first_difference(const MetricConfig& stored, const MetricConfig& wanted);

// Every rule a metric must meet (domain within the mechanism's limits,
// a valid RAPPOR shape, bucket width, retention). An empty string if valid.
std::string check_metric(const MetricConfig& metric);

// Parses "ID:MECHANISM:EPSILON[:DOMAIN][:longitudinal=E][:max_reports_per_bucket=N]
// [:max_reports_per_day=N]", e.g. "1:rr:1.0", "2:grr:2:16",
// "3:rr:1:max_reports_per_bucket=64" or "4:loloha:0.5:64:longitudinal=2"
// (named options last, any order); defaults for the rest (RAPPOR: 256-bit
// filter, 2 hashes, 64 cohorts, hash key 0; 1-hour buckets; 30 days of raw
// reports; the default contribution bound and receive-time allowance).
// kInvalid names the problem.
Outcome<MetricConfig> parse_metric_spec(const std::string& spec);

// The whole configuration as canonical JSON text (sorted keys): what the
// store keeps and compares on restart. from_text validates.
std::string config_to_text(const MetricConfig& metric);
Outcome<MetricConfig> config_from_text(const std::string& text);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CONFIG_METRIC_RULES_H
