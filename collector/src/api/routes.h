// The collector's API (collector_api.h) on the HTTP transport
// (server/http_server.h): paths, methods, body limits and content types.
#ifndef BLUR_COLLECTOR_API_ROUTES_H
#define BLUR_COLLECTOR_API_ROUTES_H

#include "api/collector_api.h"
#include "server/http_server.h"

namespace blur::collector {

// Registers the routes; `api` must outlive the server.
void add_collector_routes(http::Server& server, CollectorApi& api);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_ROUTES_H
