#include "api/metric_estimate.h"

#include <algorithm>

#include "api/numeric_estimate_json.h"
#include "discovery/discovery_cache.h"
#include "discovery/word_discovery.h"
#include "estimate/frequency_oracle.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

namespace {

void write_interval(JsonWriter& out, std::string_view name, double low, double high) {
  out.key(name).begin_array().value(low).value(high).end_array();
}

// The words of `aggregate`, from the cache when it has them.
Discovery find_words(const Aggregate& aggregate, const DiscoveryControls& controls) {
  DiscoveryOptions options;
  options.top_k = controls.top_k;
  options.cancel = controls.cancel;
  if (controls.cache == nullptr) return discover_words(aggregate, options);
  const DiscoveryCache::Key key{aggregate.metric().id, controls.top_k, aggregate.reports(),
                                aggregate.fingerprint()};
  if (auto cached = controls.cache->find(key)) return std::move(*cached);
  Discovery found = discover_words(aggregate, options);
  controls.cache->put(key, found);
  return found;
}

// {"top_k": K, "words": [{"word": "the", "estimate": ..., "stderr": ...,
//  "ci95": [lo, hi], "fraction": ...}, ...]}, in decreasing estimate order.
bool write_discovery(const Aggregate& aggregate, const DeviceClustering& clustering,
                     const DiscoveryControls& controls, JsonWriter& out) {
  const Discovery found = find_words(aggregate, controls);
  if (found.cancelled) return false;
  const double n = static_cast<double>(aggregate.reports());
  out.member("top_k", controls.top_k);
  out.member("intervals", "conditional on selection");
  out.key("words").begin_array();
  for (DiscoveredWord w : found.words) {
    w.estimate = with_device_clustering(w.estimate, clustering);
    out.begin_object()
        .member("word", w.word)
        .member("estimate", w.estimate.count)
        .member("stderr", w.estimate.std_error);
    write_interval(out, "ci95", w.estimate.ci95_low, w.estimate.ci95_high);
    out.member("fraction", w.estimate.count / n);
    out.end_object();
  }
  out.end_array();
  return true;
}

void write_variance(const DeviceClustering& clustering, JsonWriter& out) {
  out.member("variance", describe_variance(clustering))
      .member("design_effect", clustering.design_effect());
}

}  // namespace

void write_estimate(const Aggregate& aggregate, const DeviceClustering& clustering,
                    PostProcessing post, JsonWriter& out, uint32_t top_k) {
  DiscoveryControls controls;
  controls.top_k = top_k;
  (void)write_estimate(aggregate, clustering, post, out, controls);  // never cancelled
}

bool write_estimate(const Aggregate& aggregate, const DeviceClustering& clustering,
                    PostProcessing post, JsonWriter& out, const DiscoveryControls& discovery) {
  const MetricConfig& metric = aggregate.metric();
  if (aggregate.numeric()) {
    const nlohmann::json numeric =
        numeric_estimate_json(metric, aggregate.summary(), clustering, post);
    for (const auto& [name, value] : numeric.items()) out.key(name).raw(json_text(value));
    write_variance(clustering, out);
    return true;
  }
  out.member("metric_id", metric.id)
      .member("mechanism", blur::mechanism_name(metric.mechanism))
      .member("epsilon", metric.epsilon_micros / 1e6)
      .member("domain_size", metric.domain_size)
      .member("n", aggregate.reports());
  write_variance(clustering, out);
  if (mechanism_spec(metric.mechanism).discovers_words) {
    return write_discovery(aggregate, clustering, discovery, out);
  }
  if (aggregate.reports() == 0) {
    out.key("estimates").begin_array().end_array();
    return true;
  }
  const OracleParams params = oracle_params(metric);
  const uint64_t reports = aggregate.reports();
  const double n = static_cast<double>(reports);
  const std::vector<uint64_t> counts = aggregate.support_counts();
  // Shared-collision variance (RAPPOR): needs every value's plug-in count.
  std::vector<double> squared;
  double all_squared = 0;
  if (params.collision_coefficient != 0) {
    squared.resize(metric.domain_size);
    for (uint32_t value = 0; value < metric.domain_size; ++value) {
      const double c = std::clamp(estimate_count(reports, counts[value], params).count, 0.0, n);
      squared[value] = c * c;
      all_squared += c * c;
    }
  }
  std::vector<CountEstimate> estimates(metric.domain_size);
  std::vector<double> unbiased(metric.domain_size);
  for (uint32_t value = 0; value < metric.domain_size; ++value) {
    estimates[value] =
        estimate_count(reports, counts[value], params,
                       squared.empty() ? 0.0 : all_squared - squared[value], clustering);
    unbiased[value] = estimates[value].count;
  }
  std::vector<double> consistent;
  if (post == PostProcessing::kNormSub) {
    out.member("postprocessing", "norm-sub");
    consistent = norm_sub(unbiased, n);
  }
  out.reserve(size_t{metric.domain_size} * kEstimateJsonBytes);
  out.key("estimates").begin_array();
  for (uint32_t value = 0; value < metric.domain_size; ++value) {
    const CountEstimate& e = estimates[value];
    out.begin_object()
        .member("value", value)
        .member("estimate", e.count)
        .member("stderr", e.std_error);
    write_interval(out, "ci95", e.ci95_low, e.ci95_high);
    out.member("fraction", e.count / n);
    write_interval(out, "fraction_ci95", e.ci95_low / n, e.ci95_high / n);
    if (!consistent.empty()) out.member("estimate_normsub", consistent[value]);
    out.end_object();
  }
  out.end_array();
  return true;
}

std::string estimate_text(const Aggregate& aggregate, const DeviceClustering& clustering,
                          PostProcessing post) {
  JsonWriter out;
  out.begin_object();
  write_estimate(aggregate, clustering, post, out);
  out.end_object();
  return out.take();
}

nlohmann::json estimate_json(const Aggregate& aggregate, const DeviceClustering& clustering,
                             PostProcessing post) {
  return nlohmann::json::parse(estimate_text(aggregate, clustering, post));
}

}  // namespace blur::collector
