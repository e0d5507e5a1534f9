// The collector's HTTP API, on the generic transport (server/http_server.h):
//
//   POST /v1/reports                 body: an encoded blur.ReportBatch,
//                                    Content-Type: application/x-protobuf
//        200 {"accepted": n, "duplicates": d}   after the batch is committed
//        400 {"error": "..."}                   malformed or inconsistent, or larger than
//                                               the largest valid batch; nothing stored
//        415 {"error": "..."}                   another Content-Type
//        503 {"error": "..."}                   storage failed; nothing acknowledged
//   GET  /v1/metrics                 the registered metrics
//   GET  /v1/metrics/{id}/estimate   debiased estimate (see metric_estimate.h);
//                                    ?postprocess=none|norm-sub
//   GET  /healthz                    {"status": "ok"}
#ifndef BLUR_COLLECTOR_API_COLLECTOR_API_H
#define BLUR_COLLECTOR_API_COLLECTOR_API_H

#include "server/http_server.h"
#include "store/sqlite_store.h"

namespace blur::collector {

// Registers the routes above; `store` must outlive the server.
void add_collector_routes(http::Server& server, SqliteStore& store);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_COLLECTOR_API_H
