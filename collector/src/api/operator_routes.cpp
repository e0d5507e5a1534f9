#include "api/operator_routes.h"

#include "observe/exposition_text.h"
#include "server/json_response.h"

namespace blur::collector {

void add_operator_routes(http::Server& server, const OperatorEndpoints& endpoints) {
  if (const observe::Registry* metrics = endpoints.metrics) {
    server.route("GET", "/metrics", {}, [metrics](const http::Request&, http::Reply reply) {
      http::Response response;
      response.content_type = observe::kExpositionContentType;
      response.body = metrics->render();
      reply(std::move(response));
    });
  }
  if (observe::StoreMonitor* readiness = endpoints.readiness) {
    // Answered from the monitor's thread, at the latest after its timeout.
    server.route("GET", "/readyz", {}, [readiness](const http::Request&, http::Reply reply) {
      readiness->check_ready([reply = std::move(reply)](const Fallible& ready) {
        if (ready) return reply(http::json_response(200, {{"status", "ready"}}));
        reply(http::json_response(503,
                                  {{"status", "unavailable"}, {"reason", ready.error().message}}));
      });
    });
  }
  if (endpoints.health) {
    server.route("GET", "/healthz", {}, [](const http::Request&, http::Reply reply) {
      reply(http::json_response(200, {{"status", "ok"}}));
    });
  }
}

}  // namespace blur::collector
