#include "server/http_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "estimate/metric_estimate.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"

namespace blur::collector {

namespace {

void reply(httplib::Response& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

void reply_error(httplib::Response& response, int status, const std::string& message) {
  reply(response, status, {{"error", message}});
}

std::optional<uint32_t> parse_metric_id(const std::string& text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  const unsigned long long id = std::stoull(text);
  if (id > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(id);
}

}  // namespace

namespace {
std::unique_ptr<httplib::Server> make_server(const HttpServer::Tls& tls) {
  if (tls.certificate_file.empty()) return std::make_unique<httplib::Server>();
  return std::make_unique<httplib::SSLServer>(tls.certificate_file.c_str(), tls.key_file.c_str());
}
}  // namespace

bool HttpServer::ok() const { return server_->is_valid(); }

HttpServer::HttpServer(SqliteStore& store, int threads, const Tls& tls)
    : store_(store), server_(make_server(tls)) {
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Bodies past the largest valid batch are refused with 400 naming the
  // limit. Up to 4x the limit the handler reads and refuses them; beyond,
  // httplib stops reading (its 413) and the error handler turns that into
  // the same 400, so a client sees one answer for one mistake.
  server_->set_payload_max_length(4 * max_encoded_batch_size());
  server_->set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request& request, httplib::Response& response) {
        if (response.status != 413) return httplib::Server::HandlerResponse::Unhandled;
        const std::string length = request.get_header_value("Content-Length");
        reply_error(response, 400,
                    "body" + (length.empty() ? "" : " of " + length + " bytes") +
                        " exceeds the largest valid batch (" +
                        std::to_string(max_encoded_batch_size()) + " bytes)");
        return httplib::Server::HandlerResponse::Handled;
      }));
  server_->set_tcp_nodelay(true);  // small request/response pairs: no Nagle delay

  server_->Post(
      "/v1/reports", [this](const httplib::Request& request, httplib::Response& response) {
        Batch batch;
        std::string error;
        if (!decode_batch(reinterpret_cast<const uint8_t*>(request.body.data()),
                          request.body.size(), &batch, &error)) {
          return reply_error(response, 400, error);
        }
        error = validate_batch(batch, [this](uint32_t id) { return store_.metric(id); });
        if (!error.empty()) return reply_error(response, 400, error);
        SqliteStore::InsertResult result;
        if (!store_.insert_batch(batch, &result, &error)) {
          return reply_error(response, 503, "storage failure, retry later: " + error);
        }
        reply(response, 200, {{"accepted", result.inserted}, {"duplicates", result.duplicates}});
      });

  server_->Get("/v1/metrics", [this](const httplib::Request&, httplib::Response& response) {
    nlohmann::json metrics = nlohmann::json::array();
    for (const MetricConfig& m : store_.metrics()) {
      metrics.push_back({{"metric_id", m.id},
                         {"mechanism", mechanism_name(m.mechanism)},
                         {"epsilon", m.epsilon_micros / 1e6}});
    }
    reply(response, 200, {{"metrics", metrics}});
  });

  server_->Get(R"(/v1/metrics/(\d+)/estimate)", [this](const httplib::Request& request,
                                                       httplib::Response& response) {
    const auto id = parse_metric_id(request.matches[1]);
    const auto metric = id ? store_.metric(*id) : std::nullopt;
    if (!metric) {
      return reply_error(response, 404, "unknown metric " + std::string(request.matches[1]));
    }
    auto post = PostProcessing::kNone;
    if (request.has_param("postprocess")) {
      const auto parsed = post_processing_from_name(request.get_param_value("postprocess"));
      if (!parsed) {
        return reply_error(response, 400,
                           "postprocess must be none or norm-sub, not '" +
                               request.get_param_value("postprocess") + "'");
      }
      post = *parsed;
    }
    reply(response, 200, estimate_metric(*metric, store_, post));
  });

  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    reply(response, 200, {{"status", "ok"}});
  });
}

HttpServer::~HttpServer() = default;

int HttpServer::bind(const std::string& address, int port) {
  if (port == 0) return server_->bind_to_any_port(address);
  return server_->bind_to_port(address, port) ? port : -1;
}

bool HttpServer::serve() { return server_->listen_after_bind(); }

void HttpServer::stop() { server_->stop(); }

}  // namespace blur::collector
