#include "api/admin_routes.h"

#include <nlohmann/json.hpp>

#include "api/routes.h"
#include "metrics/metrics_file.h"
#include "util/json_writer.h"
#include "util/time_text.h"

namespace blur::collector {

namespace {

http::Response error_answer(const Error& error) { return to_http(error_response(error)); }

http::Response ok(const nlohmann::json& body) { return to_http(ApiResponse(200, json_text(body))); }

constexpr size_t kMaxAdminBody = 64 * 1024;

}  // namespace

void add_admin_routes(http::Server& server, Store& store, auth::Authenticator& authenticator,
                      const std::function<http::Handler(http::Handler)>& admin_only) {
  http::RouteLimits json_body;
  json_body.max_body_bytes = kMaxAdminBody;
  json_body.content_types = {"application/json"};
  json_body.body_limit_name = "the admin request limit";
  server.route(
      "POST", "/v1/admin/tokens", json_body,
      admin_only([&authenticator](const http::Request& request, http::Reply reply) {
        const auto body = nlohmann::json::parse(request.body, nullptr, false);
        const char* kShape = R"(the body is {"role": "reader"|"admin"|"enrollment", "name": "..."})";
        if (!body.is_object() || !body.contains("role") || !body["role"].is_string() ||
            (body.contains("name") && !body["name"].is_string())) {
          return reply(error_answer(invalid(kShape)));
        }
        std::optional<auth::Role> role;
        for (auth::Role r : {auth::Role::kReader, auth::Role::kAdmin, auth::Role::kEnrollment}) {
          if (body["role"] == auth::role_name(r)) role = r;
        }
        if (!role) return reply(error_answer(invalid(kShape)));
        const std::string name = body.value("name", std::string());
        if (name.size() > 200) return reply(error_answer(invalid("a token's name is at most 200 bytes")));
        auto token = authenticator.create_token(*role, name);
        if (!token) return reply(error_answer(token.error()));
        reply(ok({{"token", token.value()}, {"role", auth::role_name(*role)}, {"name", name}}));
      }),
      "/v1/admin/tokens");
  server.route(
      "POST", "/v1/admin/device-keys", {},
      admin_only([&authenticator](const http::Request&, http::Reply reply) {
        auto id = authenticator.rotate_device_key();
        if (!id) return reply(error_answer(id.error()));
        reply(ok({{"key_id", id.value()}}));
      }),
      "/v1/admin/device-keys");
  http::RouteLimits toml_body;
  toml_body.max_body_bytes = kMaxAdminBody;
  toml_body.content_types = {"application/toml"};
  toml_body.body_limit_name = "the admin request limit";
  server.route(
      "POST", "/v1/admin/metrics", toml_body,
      admin_only([&store](const http::Request& request, http::Reply reply) {
        auto metrics = parse_metrics_toml(request.body, "the request body");
        if (!metrics) return reply(error_answer(metrics.error()));
        nlohmann::json ids = nlohmann::json::array();
        for (const MetricConfig& metric : metrics.value()) {
          if (auto registered = store.register_metric(metric); !registered)
            return reply(error_answer(registered.error()));
          ids.push_back(metric.id);
        }
        reply(ok({{"registered", ids}}));
      }),
      "/v1/admin/metrics");
  server.route(
      "POST", "/v1/admin/prune", {},
      admin_only([&store](const http::Request&, http::Reply reply) {
        nlohmann::json deleted = nlohmann::json::object();
        const int64_t now = unix_now();
        for (const MetricConfig& metric : store.metrics()) {
          auto count = store.prune(metric, now);
          if (!count) return reply(error_answer(count.error()));
          deleted[std::to_string(metric.id)] = count.value();
        }
        reply(ok({{"deleted", deleted}}));
      }),
      "/v1/admin/prune");
}

}  // namespace blur::collector
