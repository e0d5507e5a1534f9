// The operator's endpoints, on the API's server or on a server of their own
// (serve --metrics-address):
//
//   GET /metrics   Prometheus text exposition (version 0.0.4)
//   GET /readyz    200 {"status": "ready"} when the store answered a trivial
//                  query in time; 503 {"status": "unavailable", "reason": ...}
//   GET /healthz   200 {"status": "ok"}: the process serves (the API's server
//                  has it already; with a token, this one is registered first
//                  and answers instead)
//
// With a token (serve --monitoring-token-file), each of them answers only a
// request with "Authorization: Bearer <token>": 401 otherwise, with
// WWW-Authenticate, and nothing about the process.
#ifndef BLUR_COLLECTOR_API_OPERATOR_ROUTES_H
#define BLUR_COLLECTOR_API_OPERATOR_ROUTES_H

#include "auth/secret.h"
#include "observe/prometheus_registry.h"
#include "observe/store_monitor.h"
#include "server/http_server.h"

namespace blur::collector {

struct OperatorEndpoints {
  const observe::Registry* metrics = nullptr;  // null: no /metrics
  observe::StoreMonitor* readiness = nullptr;  // null: no /readyz
  bool health = false;                         // add /healthz
  const auth::Digest* token = nullptr;         // the token's SHA-256; null: open to all
};

// Registers the endpoints; what they point to must outlive the server.
void add_operator_routes(http::Server& server, const OperatorEndpoints& endpoints);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_OPERATOR_ROUTES_H
