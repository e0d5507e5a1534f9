#include "api/collector_api.h"

#include <nlohmann/json.hpp>

#include "estimate/metric_estimate.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"
#include "server/json_response.h"

namespace blur::collector {

namespace {

using http::error_response;
using http::json_response;

// `text` is the route's (\d+) capture: digits only.
std::optional<uint32_t> parse_metric_id(const std::string& text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  const unsigned long long id = std::stoull(text);
  if (id > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(id);
}

void post_reports(SqliteStore& store, const http::Request& request, const http::Reply& reply) {
  Batch batch;
  std::string error;
  if (!decode_batch(reinterpret_cast<const uint8_t*>(request.body.data()), request.body.size(),
                    &batch, &error)) {
    return reply(error_response(400, error));
  }
  error = validate_batch(batch, [&store](uint32_t id) { return store.metric(id); });
  if (!error.empty()) return reply(error_response(400, error));
  SqliteStore::InsertResult result;
  if (!store.insert_batch(batch, &result, &error)) {
    return reply(error_response(503, "storage failure, retry later: " + error));
  }
  reply(json_response(200, {{"accepted", result.inserted}, {"duplicates", result.duplicates}}));
}

void get_metrics(SqliteStore& store, const http::Reply& reply) {
  nlohmann::json metrics = nlohmann::json::array();
  for (const MetricConfig& m : store.metrics()) {
    metrics.push_back({{"metric_id", m.id},
                       {"mechanism", mechanism_name(m.mechanism)},
                       {"epsilon", m.epsilon_micros / 1e6}});
  }
  reply(json_response(200, {{"metrics", metrics}}));
}

void get_estimate(SqliteStore& store, const http::Request& request, const http::Reply& reply) {
  const std::string& id_text = request.path_params.at(0);
  const auto id = parse_metric_id(id_text);
  const auto metric = id ? store.metric(*id) : std::nullopt;
  if (!metric) return reply(error_response(404, "unknown metric " + id_text));
  auto post = PostProcessing::kNone;
  if (const auto name = request.query_value("postprocess")) {
    const auto parsed = post_processing_from_name(*name);
    // The name is untrusted bytes (percent-decoded): json_text replaces
    // what is not UTF-8.
    if (!parsed) {
      return reply(error_response(400, "postprocess must be none or norm-sub, not '" + *name + "'"));
    }
    post = *parsed;
  }
  reply(json_response(200, estimate_metric(*metric, store, post)));
}

}  // namespace

void add_collector_routes(http::Server& server, SqliteStore& store) {
  http::RouteLimits batch_limits;
  batch_limits.max_body_bytes = max_encoded_batch_size();
  batch_limits.content_types = {"application/x-protobuf"};
  batch_limits.body_limit_name = "the largest valid batch";
  server.route("POST", "/v1/reports", batch_limits,
               [&store](const http::Request& request, http::Reply reply) {
                 post_reports(store, request, reply);
               });
  server.route("GET", "/v1/metrics", {}, [&store](const http::Request&, http::Reply reply) {
    get_metrics(store, reply);
  });
  server.route("GET", R"(/v1/metrics/(\d+)/estimate)", {},
               [&store](const http::Request& request, http::Reply reply) {
                 get_estimate(store, request, reply);
               });
  server.route("GET", "/healthz", {}, [](const http::Request&, http::Reply reply) {
    reply(json_response(200, {{"status", "ok"}}));
  });
}

}  // namespace blur::collector
