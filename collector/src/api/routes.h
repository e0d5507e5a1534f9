// The collector's API (collector_api.h) on the HTTP transport
// (server/http_server.h): paths, methods, body limits, content types, and
// who may call each (auth/authenticator.h):
//
//   POST /v1/enroll                          the app's enrollment secret
//   POST /v1/reports                         a device (token or certificate)
//   GET  /v1/metrics, .../estimate, .../series   a reader or admin token
//   /v1/admin/tokens[/revoke], /v1/admin/devices/{revoke,restore,revoked},
//        /v1/admin/device-keys, /v1/admin/metrics, /v1/admin/prune,
//        /v1/admin/reload                 an admin token
//   GET  /healthz, /openapi.yaml             anyone
//
// collector/api/openapi.yaml describes them all (api_description.h).
// A 401 carries WWW-Authenticate: Bearer; a 429 or 503 carries Retry-After.
// Estimates and series run on a ReadPool (read_pool.h), never on the I/O
// threads, so a slow read cannot hold /healthz or device POSTs.
#ifndef BLUR_COLLECTOR_API_ROUTES_H
#define BLUR_COLLECTOR_API_ROUTES_H

#include "api/collector_api.h"
#include "api/live_reload.h"
#include "api/read_pool.h"
#include "auth/authenticator.h"
#include "server/http_server.h"

namespace blur::collector {

// Registers the routes; `api`, `store` and `authenticator` must outlive the
// server. A null `authenticator` (serve --no-auth) lets anyone do anything
// and leaves out /v1/enroll and /v1/admin. `reads`: the pool estimates and
// series run on (it must be stopped before the server is destroyed); null
// runs them on the I/O thread without a deadline (tests of the API alone).
// `reload`: what POST /v1/admin/reload runs (null: no such route).
void add_collector_routes(http::Server& server, CollectorApi& api, Store& store,
                          auth::Authenticator* authenticator, ReadPool* reads = nullptr,
                          LiveReload* reload = nullptr);

// The HTTP answer for an API answer (headers for its status included).
http::Response to_http(ApiResponse answer);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_ROUTES_H
