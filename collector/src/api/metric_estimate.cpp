#include "api/metric_estimate.h"

#include <algorithm>
#include <cstring>
#include <string_view>

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
void write_words(const EstimateTable& table, uint32_t top_k, JsonWriter& out) {
  const double n = static_cast<double>(table.n);
  out.member("top_k", top_k);
  out.member("intervals", "conditional on selection");
  out.key("words").begin_array();
  for (const ValueEstimate& w : table.values) {
    out.begin_object()
        .member("word", w.word)
        .member("estimate", w.estimate.count)
        .member("stderr", w.estimate.std_error);
    write_interval(out, "ci95", w.estimate.ci95_low, w.estimate.ci95_high);
    out.member("fraction", w.estimate.count / n);
    out.end_object();
  }
  out.end_array();
}

// One entry of "estimates" as text, made in a buffer of its own and
// appended at once: a wide series has millions of them, and the writer's
// calls per member (a comma to decide, the name to escape, an append each)
// took most of its time. Names are constants; numbers are written as
// JsonWriter writes them. At most kEstimateJsonBytes.
class EntryText {
 public:
  template <size_t N>
  EntryText& put(const char (&constant)[N]) {
    std::memcpy(end_, constant, N - 1);
    end_ += N - 1;
    return *this;
  }
  template <typename Number>
  EntryText& number(Number x) {
    end_ = put_json_number(end_, x);
    return *this;
  }
  std::string_view text() const { return {text_, static_cast<size_t>(end_ - text_)}; }

 private:
  // The bound, and a number's whole room past the last one written.
  char text_[kEstimateJsonBytes + kJsonNumberBytes];
  char* end_ = text_;
};

// The estimates of a frequency oracle's aggregate (with reports): of every
// value, or of the `selected` ones. Only norm-sub and the shared-collision
// variance need the other values' counts.
std::vector<ValueEstimate> frequencies(const Aggregate& aggregate,
                                       const DeviceClustering& clustering, PostProcessing post,
                                       const ValueSelection* selected) {
  const MetricConfig& metric = aggregate.metric();
  const OracleParams params = oracle_params(metric);
  const uint64_t reports = aggregate.reports();
  const double n = static_cast<double>(reports);
  // Shared-collision variance (RAPPOR) and norm-sub need every value's
  // count; otherwise only the selected values' support is computed.
  const bool every_value =
      selected == nullptr || params.collision_coefficient != 0 || post == PostProcessing::kNormSub;
  if (!every_value) {
    const std::vector<uint64_t> support = aggregate.support_counts(selected->values());
    std::vector<ValueEstimate> values(support.size());
    for (size_t i = 0; i < support.size(); ++i) {
      values[i].value = selected->values()[i];
      values[i].estimate = estimate_count(reports, support[i], params, 0.0, clustering);
    }
    return values;
  }
  const std::vector<uint64_t> counts = aggregate.support_counts();
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
  std::vector<ValueEstimate> values(metric.domain_size);
  std::vector<double> unbiased(metric.domain_size);
  for (uint32_t value = 0; value < metric.domain_size; ++value) {
    values[value].value = value;
    values[value].estimate =
        estimate_count(reports, counts[value], params,
                       squared.empty() ? 0.0 : all_squared - squared[value], clustering);
    unbiased[value] = values[value].estimate.count;
  }
  if (post == PostProcessing::kNormSub) {
    const std::vector<double> consistent = norm_sub(unbiased, n);
    for (uint32_t value = 0; value < metric.domain_size; ++value) {
      values[value].estimate_normsub = consistent[value];
    }
  }
  if (selected != nullptr) {
    values.erase(std::remove_if(values.begin(), values.end(),
                                [&](const ValueEstimate& v) { return !selected->contains(v.value); }),
                 values.end());
  }
  return values;
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
                    PostProcessing post, JsonWriter& out, const DiscoveryControls& discovery,
                    const ValueSelection* values) {
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
  const auto table = estimate_table(aggregate, clustering, post, discovery, values);
  if (!table) return false;
  if (table->shape == EstimateTable::Shape::kWords) {
    write_words(*table, discovery.top_k, out);
    return true;
  }
  if (post == PostProcessing::kNormSub && !table->values.empty()) {
    out.member("postprocessing", "norm-sub");
  }
  out.reserve(table->values.size() * kEstimateJsonBytes);
  const double n = static_cast<double>(table->n);
  out.key("estimates").begin_array();
  for (const ValueEstimate& v : table->values) {
    const CountEstimate& e = v.estimate;
    EntryText entry;
    entry.put(R"({"value":)").number(uint64_t{v.value});
    entry.put(R"(,"estimate":)").number(e.count);
    entry.put(R"(,"stderr":)").number(e.std_error);
    entry.put(R"(,"ci95":[)").number(e.ci95_low).put(",").number(e.ci95_high);
    entry.put(R"(],"fraction":)").number(e.count / n);
    entry.put(R"(,"fraction_ci95":[)").number(e.ci95_low / n).put(",").number(e.ci95_high / n);
    entry.put("]");
    if (v.estimate_normsub) entry.put(R"(,"estimate_normsub":)").number(*v.estimate_normsub);
    entry.put("}");
    out.raw(entry.text());
  }
  out.end_array();
  return true;
}

std::optional<EstimateTable> estimate_table(const Aggregate& aggregate,
                                            const DeviceClustering& clustering, PostProcessing post,
                                            const DiscoveryControls& discovery,
                                            const ValueSelection* values) {
  EstimateTable table;
  table.n = aggregate.reports();
  table.design_effect = clustering.design_effect();
  if (aggregate.numeric()) {
    table.shape = EstimateTable::Shape::kMean;
    const NumericEstimate numeric =
        estimate_numeric(aggregate.metric(), aggregate.summary(), clustering);
    if (numeric.mean) table.values.push_back({0, {}, *numeric.mean, std::nullopt});
    return table;
  }
  if (mechanism_spec(aggregate.metric().mechanism).discovers_words) {
    table.shape = EstimateTable::Shape::kWords;
    Discovery found = find_words(aggregate, discovery);
    if (found.cancelled) return std::nullopt;
    for (DiscoveredWord& w : found.words) {
      table.values.push_back(
          {0, std::move(w.word), with_device_clustering(w.estimate, clustering), std::nullopt});
    }
    return table;
  }
  if (table.n != 0) table.values = frequencies(aggregate, clustering, post, values);
  return table;
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
