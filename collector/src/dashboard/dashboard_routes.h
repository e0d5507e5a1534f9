// The web dashboard (collector/web/) on the HTTP transport: GET / is the
// page, GET /static/<name> its scripts, style sheet and Chart.js, all from
// the binary (embedded_file.h). The page reads the JSON API like any client.
#ifndef BLUR_COLLECTOR_DASHBOARD_DASHBOARD_ROUTES_H
#define BLUR_COLLECTOR_DASHBOARD_DASHBOARD_ROUTES_H

#include "server/http_server.h"

namespace blur::collector {

// Every answer says "Cache-Control: no-cache" with an ETag, so a browser
// revalidates (If-None-Match -> 304, no body) and never keeps a dashboard
// older than the collector it talks to. An unknown /static/ name is a 404.
void add_dashboard_routes(http::Server& server);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DASHBOARD_DASHBOARD_ROUTES_H
