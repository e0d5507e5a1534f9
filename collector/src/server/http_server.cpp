#include "server/http_server.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <future>

#include "ingest/batch_decoder.h"

namespace blur::collector {

namespace {
std::unique_ptr<httplib::Server> make_server(const HttpServer::Tls& tls) {
  if (tls.certificate_file.empty()) return std::make_unique<httplib::Server>();
  return std::make_unique<httplib::SSLServer>(tls.certificate_file.c_str(), tls.key_file.c_str());
}
}  // namespace

bool HttpServer::ok() const { return server_->is_valid(); }

namespace {
QueryParams query_of(const httplib::Request& request) {
  QueryParams query;
  for (const auto& [key, value] : request.params) query.emplace_back(key, value);
  return query;
}
void send(httplib::Response& response, const ApiResponse& answer) {
  response.status = answer.status;
  response.set_content(answer.body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                       "application/json");
}
}  // namespace

HttpServer::HttpServer(CollectorApi& api, int threads, const Tls& tls)
    : api_(api), server_(make_server(tls)) {
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(4 * max_encoded_batch_size());
  server_->set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& response) {
        if (response.status != 413) return httplib::Server::HandlerResponse::Unhandled;
        send(response, {400, {{"error", "body exceeds the largest valid batch (" +
                                            std::to_string(max_encoded_batch_size()) +
                                            " bytes)"}}});
        return httplib::Server::HandlerResponse::Handled;
      }));
  server_->set_tcp_nodelay(true);
  server_->Post("/v1/reports", [this](const httplib::Request& request,
                                      httplib::Response& response) {
    std::promise<ApiResponse> answer;
    auto future = answer.get_future();
    api_.post_reports(request.body, [&answer](ApiResponse r) { answer.set_value(std::move(r)); });
    send(response, future.get());
  });
  server_->Get("/v1/metrics", [this](const httplib::Request&, httplib::Response& response) {
    send(response, api_.metrics());
  });
  server_->Get(R"(/v1/metrics/(\d+)/estimate)",
               [this](const httplib::Request& request, httplib::Response& response) {
                 send(response, api_.estimate(request.matches[1], query_of(request)));
               });
  server_->Get(R"(/v1/metrics/(\d+)/series)",
               [this](const httplib::Request& request, httplib::Response& response) {
                 send(response, api_.series(request.matches[1], query_of(request)));
               });
  server_->Get("/healthz", [this](const httplib::Request&, httplib::Response& response) {
    send(response, api_.health());
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
