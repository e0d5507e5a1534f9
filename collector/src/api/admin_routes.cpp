#include "api/admin_routes.h"

#include <nlohmann/json.hpp>

#include "api/routes.h"
#include "config/metrics_file.h"
#include "util/json_writer.h"
#include "util/time_text.h"

namespace blur::collector {

namespace {

http::Response error_answer(const Error& error) { return to_http(error_response(error)); }

http::Response ok(const nlohmann::json& body) { return to_http(ApiResponse(200, json_text(body))); }

constexpr size_t kMaxAdminBody = 64 * 1024;

nlohmann::json when(int64_t revoked_at) {
  return revoked_at == 0 ? nlohmann::json(nullptr) : nlohmann::json(revoked_at);
}

nlohmann::json token_json(const auth::StoredToken& token) {
  return {{"id", auth::token_id(token.sha256)},
          {"name", token.name},
          {"role", auth::role_name(token.role)},
          {"revoked_at", when(token.revoked_at)}};
}

std::string nonce_text(uint64_t nonce) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(nonce));
  return text;
}

nlohmann::json device_json(const auth::RevokedDevice& device) {
  return {{"device_nonce", nonce_text(device.device_nonce)},
          {"revoked_at", when(device.revoked_at)}};
}

// {"id": "..."} or {"name": "..."}: which token to revoke.
Outcome<auth::TokenChoice> token_choice(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  const Error shape = invalid(R"(the body is {"id": "<token id>"} or {"name": "<token name>"})");
  if (!json.is_object() || json.size() != 1) return shape;
  auth::TokenChoice choice;
  const auto field = json.begin();
  if (field.key() == "id") {
    choice.by = auth::TokenChoice::By::kId;
  } else if (field.key() == "name") {
    choice.by = auth::TokenChoice::By::kName;
  } else {
    return shape;
  }
  if (!field->is_string()) return shape;
  choice.value = field->get<std::string>();
  return choice;
}

// {"device_nonce": "<16 lower-case hex digits>"}, as enrollment names a device.
Outcome<uint64_t> device_choice(const std::string& body) {
  const auto json = nlohmann::json::parse(body, nullptr, false);
  uint64_t nonce = 0;
  if (!json.is_object() || json.size() != 1 || !json.contains("device_nonce") ||
      !json["device_nonce"].is_string() ||
      json["device_nonce"].get_ref<const std::string&>().size() != 16 ||
      !auth::read_hex(json["device_nonce"].get_ref<const std::string&>(), &nonce)) {
    return invalid(R"(the body is {"device_nonce": "<16 lower-case hex digits>"})");
  }
  return nonce;
}

}  // namespace

void add_admin_routes(http::Server& server, Store& store, auth::Authenticator& authenticator,
                      const std::function<http::Handler(http::Handler)>& admin_only,
                      LiveReload* reload) {
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
        reply(ok({{"token", token.value()},
                  {"id", auth::token_id(auth::sha256(token.value()))},
                  {"role", auth::role_name(*role)},
                  {"name", name}}));
      }),
      "/v1/admin/tokens");
  server.route(
      "GET", "/v1/admin/tokens", {},
      admin_only([&authenticator](const http::Request&, http::Reply reply) {
        nlohmann::json tokens = nlohmann::json::array();
        for (const auth::StoredToken& token : authenticator.tokens()) {
          tokens.push_back(token_json(token));
        }
        reply(ok({{"tokens", tokens}}));
      }),
      "/v1/admin/tokens");
  server.route(
      "POST", "/v1/admin/tokens/revoke", json_body,
      admin_only([&authenticator](const http::Request& request, http::Reply reply) {
        auto choice = token_choice(request.body);
        if (!choice) return reply(error_answer(choice.error()));
        auto revoked = authenticator.revoke_token(choice.value(), unix_now());
        if (!revoked) return reply(error_answer(revoked.error()));
        reply(ok({{"revoked", token_json(revoked.value())}}));
      }),
      "/v1/admin/tokens/revoke");
  server.route(
      "POST", "/v1/admin/devices/revoke", json_body,
      admin_only([&authenticator](const http::Request& request, http::Reply reply) {
        auto nonce = device_choice(request.body);
        if (!nonce) return reply(error_answer(nonce.error()));
        auto revoked = authenticator.revoke_device(nonce.value(), unix_now());
        if (!revoked) return reply(error_answer(revoked.error()));
        reply(ok({{"revoked", device_json(revoked.value())}}));
      }),
      "/v1/admin/devices/revoke");
  server.route(
      "POST", "/v1/admin/devices/restore", json_body,
      admin_only([&authenticator](const http::Request& request, http::Reply reply) {
        auto nonce = device_choice(request.body);
        if (!nonce) return reply(error_answer(nonce.error()));
        if (auto restored = authenticator.restore_device(nonce.value()); !restored)
          return reply(error_answer(restored.error()));
        reply(ok({{"restored", {{"device_nonce", nonce_text(nonce.value())}}}}));
      }),
      "/v1/admin/devices/restore");
  server.route(
      "GET", "/v1/admin/devices/revoked", {},
      admin_only([&authenticator](const http::Request&, http::Reply reply) {
        nlohmann::json devices = nlohmann::json::array();
        for (const auth::RevokedDevice& device : authenticator.revoked_devices()) {
          devices.push_back(device_json(device));
        }
        reply(ok({{"devices", devices}}));
      }),
      "/v1/admin/devices/revoked");
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
      "POST", "/v1/admin/metrics/retire", json_body,
      admin_only([&store](const http::Request& request, http::Reply reply) {
        const auto body = nlohmann::json::parse(request.body, nullptr, false);
        if (!body.is_object() || body.size() != 1 || !body.contains("metric_id") ||
            !body["metric_id"].is_number_unsigned() ||
            body["metric_id"].get<uint64_t>() > UINT32_MAX) {
          return reply(error_answer(invalid(R"(the body is {"metric_id": <metric id>})")));
        }
        const auto id = body["metric_id"].get<uint32_t>();
        auto retired = store.retire_metric(id, unix_now());
        if (!retired) return reply(error_answer(retired.error()));
        reply(ok({{"retired", {{"metric_id", id}, {"retired_at", format_time(retired.value())}}}}));
      }),
      "/v1/admin/metrics/retire");
  server.route(
      "POST", "/v1/admin/prune", {},
      admin_only([&store](const http::Request&, http::Reply reply) {
        nlohmann::json deleted = nlohmann::json::object();
        const int64_t now = unix_now();
        auto days = store.drop_expired_partitions(now);
        if (!days) return reply(error_answer(days.error()));
        nlohmann::json dropped = nlohmann::json::array();
        for (int64_t day : days.value()) dropped.push_back(format_time(day).substr(0, 10));
        for (const MetricConfig& metric : store.metrics()) {
          auto count = store.prune(metric, now);
          if (!count) return reply(error_answer(count.error()));
          deleted[std::to_string(metric.id)] = count.value();
        }
        reply(ok({{"deleted", deleted}, {"dropped_partitions", dropped}}));
      }),
      "/v1/admin/prune");
  if (reload != nullptr) {
    server.route(
        "POST", "/v1/admin/reload", {},
        admin_only([reload](const http::Request&, http::Reply reply) {
          const LiveReload::Summary summary = reload->reload_now();
          reply(ok({{"metrics", summary.metrics},
                    {"new_metrics", summary.new_metrics},
                    {"credentials", summary.credentials},
                    {"problems", summary.problems}}));
        }),
        "/v1/admin/reload");
  }
}

}  // namespace blur::collector
