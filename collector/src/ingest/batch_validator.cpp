#include "ingest/batch_validator.h"

#include <unordered_set>

#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"

namespace blur::collector {

std::string payload_shape_error(const MetricConfig& metric, const IncomingReport& r) {
  const PayloadKind shape = blur::mechanism_payload(metric.mechanism);
  if (!r.has_payload || r.payload != shape) {
    static const char* const kNames[] = {"bit", "index", "bits", "value", "local_hash", "bloom"};
    return std::string("payload must be `") + kNames[static_cast<int>(shape)] + "` for " +
           blur::mechanism_name(metric.mechanism);
  }
  if (shape == PayloadKind::kBits) {
    const size_t bytes = (metric.domain_size + 7) / 8;
    if (r.bits.size() != bytes) {
      return "bit vector of " + std::to_string(r.bits.size()) + " bytes, expected " +
             std::to_string(bytes) + " for " + describe(metric);
    }
    const unsigned padding = 8 * bytes - metric.domain_size;
    if (padding > 0 && (static_cast<uint8_t>(r.bits.back()) >> (8 - padding)) != 0) {
      return "bits set past the domain of " + describe(metric);
    }
  } else if (shape == PayloadKind::kBloom) {
    if (r.bits.size() != metric.rappor.bloom_bits / 8) {
      return "Bloom filter of " + std::to_string(r.bits.size()) + " bytes, expected " +
             std::to_string(metric.rappor.bloom_bits / 8) + " for " + describe(metric);
    }
    if (r.value >= metric.rappor.cohort_count) {
      return "cohort " + std::to_string(r.value) + " is outside the " +
             std::to_string(metric.rappor.cohort_count) + " cohorts of " + describe(metric);
    }
  } else if (metric.mechanism == MechanismId::kPrefixExtension) {
    if (r.hash_a >= blur::PrefixExtension::levels(metric.domain_size) ||
        r.hash_b >= blur::kPrefixHashSeeds ||
        r.value >> blur::PrefixExtension::bucket_bits(metric.epsilon_micros) != 0) {
      return "prefix level, hash seed or bucket outside the family of " +
             describe(metric);
    }
  } else if (metric.mechanism == MechanismId::kSequenceFragmentPuzzle) {
    const uint32_t bits = blur::SequenceFragmentPuzzle::bucket_bits(metric.epsilon_micros);
    if (r.hash_a >> blur::kFragmentHashSeedBits >=
            blur::SequenceFragmentPuzzle::positions(metric.domain_size) ||
        r.hash_b >= blur::kPrefixHashSeeds || (r.value & 0xFFu) >> bits != 0 ||
        r.value >> 8 >> bits != 0) {
      return "fragment position, hash seed or bucket outside the family of " + describe(metric);
    }
  } else if (shape == PayloadKind::kLocalHash) {
    const auto lh = local_hash_shape(metric);
    if (r.hash_a >> lh.field_bits != 0 || r.hash_b >> lh.field_bits != 0 ||
        r.value >> lh.bucket_bits != 0) {
      return "hash seed or bucket outside the family of " + describe(metric);
    }
  } else if ((shape == PayloadKind::kBit || shape == PayloadKind::kIndex) &&
             r.value >= report_value_limit(metric)) {
    return "index " + std::to_string(r.value) + " is outside the domain of " +
           describe(metric);
  }
  return {};
}

std::string validate_batch(const Batch& batch, const MetricLookup& lookup, bool* unknown_metric) {
  if (unknown_metric != nullptr) *unknown_metric = false;
  if (batch.reports.empty()) return "batch has no reports";
  std::unordered_set<uint64_t> ids;
  for (size_t i = 0; i < batch.reports.size(); ++i) {
    const IncomingReport& r = batch.reports[i];
    const std::string where =
        "report " + std::to_string(i) + " (id " + std::to_string(r.report_id) + "): ";
    if (!ids.insert(r.report_id).second) return where + "report id repeats within the batch";
    const auto metric = lookup(r.metric_id);
    if (!metric) {
      if (unknown_metric != nullptr) *unknown_metric = true;
      return where + "unknown metric " + std::to_string(r.metric_id);
    }
    if (r.mechanism != static_cast<uint32_t>(metric->mechanism)) {
      return where + "mechanism " + std::to_string(r.mechanism) + " does not match " +
             describe(*metric);
    }
    if (r.epsilon_micros != metric->epsilon_micros) {
      return where + "epsilon_micros " + std::to_string(r.epsilon_micros) + " does not match " +
             describe(*metric);
    }
    if (r.domain_size != metric->domain_size) {
      return where + "domain_size " + std::to_string(r.domain_size) + " does not match " +
             describe(*metric);
    }
    if (r.longitudinal_epsilon_micros != metric->longitudinal_epsilon_micros) {
      return where + "longitudinal_epsilon_micros " +
             std::to_string(r.longitudinal_epsilon_micros) + " does not match " +
             describe(*metric);
    }
    if (std::string error = payload_shape_error(*metric, r); !error.empty()) return where + error;
  }
  return {};
}

}  // namespace blur::collector
