#include "api/operator_routes.h"

#include "auth/authenticator.h"
#include "observe/exposition_text.h"
#include "server/json_response.h"

namespace blur::collector {

namespace {

// `handler`, for requests bearing the token only (all when `token` is null).
http::Handler guarded(const auth::Digest* token, http::Handler handler) {
  if (token == nullptr) return handler;
  return [token = *token, handler = std::move(handler)](const http::Request& request,
                                                        http::Reply reply) {
    const std::string authorization = request.header("Authorization");
    const std::string_view bearer = auth::bearer_credential(authorization);
    if (bearer.empty() || !auth::equal_in_constant_time(auth::sha256(bearer), token)) {
      http::Response refused =
          http::json_response(401, {{"error", "this endpoint needs the monitoring token"}});
      refused.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"blur\"");
      refused.refusal = "unauthenticated";
      return reply(std::move(refused));
    }
    handler(request, std::move(reply));
  };
}

}  // namespace

void add_operator_routes(http::Server& server, const OperatorEndpoints& endpoints) {
  const auth::Digest* token = endpoints.token;
  if (const observe::Registry* metrics = endpoints.metrics) {
    server.route("GET", "/metrics", {},
                 guarded(token, [metrics](const http::Request&, http::Reply reply) {
                   http::Response response;
                   response.content_type = observe::kExpositionContentType;
                   response.body = metrics->render();
                   reply(std::move(response));
                 }));
  }
  if (observe::StoreMonitor* readiness = endpoints.readiness) {
    // Answered from the monitor's thread, at the latest after its timeout.
    server.route("GET", "/readyz", {},
                 guarded(token, [readiness](const http::Request&, http::Reply reply) {
                   readiness->check_ready([reply = std::move(reply)](const Fallible& ready) {
                     if (ready) return reply(http::json_response(200, {{"status", "ready"}}));
                     reply(http::json_response(
                         503, {{"status", "unavailable"}, {"reason", ready.error().message}}));
                   });
                 }));
  }
  if (endpoints.health) {
    server.route("GET", "/healthz", {}, guarded(token, [](const http::Request&, http::Reply reply) {
                   reply(http::json_response(200, {{"status", "ok"}}));
                 }));
  }
}

}  // namespace blur::collector
