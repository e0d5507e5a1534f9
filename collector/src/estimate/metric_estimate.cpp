#include "estimate/metric_estimate.h"

#include <algorithm>

#include "estimate/frequency_oracle.h"
#include "estimate/numeric_summary.h"

namespace blur::collector {

nlohmann::json estimate_json(const SupportCounter& support, PostProcessing post) {
  const MetricConfig& metric = support.metric();
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  out["domain_size"] = metric.domain_size;
  out["n"] = support.reports();
  out["estimates"] = nlohmann::json::array();
  if (support.reports() == 0) return out;
  const OracleParams params = oracle_params(metric);
  const double n = static_cast<double>(support.reports());
  const std::vector<uint64_t> counts = support.counts();
  // Shared-collision variance (RAPPOR): needs every value's plug-in count.
  std::vector<double> squared(metric.domain_size, 0.0);
  double all_squared = 0;
  if (params.collision_coefficient != 0) {
    for (uint32_t value = 0; value < metric.domain_size; ++value) {
      const double c =
          std::clamp(estimate_count(support.reports(), counts[value], params).count, 0.0, n);
      squared[value] = c * c;
      all_squared += c * c;
    }
  }
  std::vector<double> unbiased;
  for (uint32_t value = 0; value < metric.domain_size; ++value) {
    const CountEstimate e =
        estimate_count(support.reports(), counts[value], params, all_squared - squared[value]);
    unbiased.push_back(e.count);
    out["estimates"].push_back({{"value", value},
                                {"estimate", e.count},
                                {"stderr", e.std_error},
                                {"ci95", {e.ci95_low, e.ci95_high}},
                                {"fraction", e.count / n},
                                {"fraction_ci95", {e.ci95_low / n, e.ci95_high / n}}});
  }
  if (post == PostProcessing::kNormSub) add_norm_sub(unbiased, n, &out["estimates"], &out);
  return out;
}

MetricAggregate::MetricAggregate(const MetricConfig& metric) : metric_(metric) {
  if (!is_numeric(metric.mechanism)) support_.emplace(metric);
}

void MetricAggregate::add(int64_t value, const std::string& bits, uint64_t count) {
  if (support_) {
    support_->add(static_cast<uint64_t>(value), bits, count);
  } else {
    summary_.add(value, count);
  }
}

void MetricAggregate::add(const IncomingReport& report) {
  int64_t value = report.value;
  if (report.payload == PayloadKind::kNumber) value = report.number;
  if (report.payload == PayloadKind::kLocalHash) {
    value = static_cast<int64_t>(
        SupportCounter::pack_local_hash(report.hash_a, report.hash_b, report.value));
  }
  add(value, report.bits);
}

nlohmann::json MetricAggregate::estimate(PostProcessing post) const {
  if (support_) return estimate_json(*support_, post);
  return numeric_estimate_json(metric_, summary_, post);
}

nlohmann::json estimate_metric(const MetricConfig& metric, const SqliteStore& store,
                               PostProcessing post) {
  MetricAggregate aggregate(metric);
  store.for_each_payload(metric.id, [&](int64_t value, const std::string& bits, uint64_t count) {
    aggregate.add(value, bits, count);
  });
  return aggregate.estimate(post);
}

}  // namespace blur::collector
