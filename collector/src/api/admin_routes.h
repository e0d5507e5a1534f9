// The admin API (an admin bearer token on every call):
//
//   POST /v1/admin/tokens       {"role": "reader"|"admin"|"enrollment", "name": "..."}
//        200 {"token": "...", "id": ..., "role": ..., "name": ...}   the token shown once;
//                               only its digest is kept, the id names it from then on
//   GET  /v1/admin/tokens       200 {"tokens": [{"id", "name", "role", "revoked_at"}]}
//                               (revoked_at null for a token in force; never a token)
//   POST /v1/admin/tokens/revoke  {"id": "..."} or {"name": "..."}: 200 {"revoked": {...}};
//                               404 none, 409 a name several share or the last admin token
//   POST /v1/admin/devices/revoke   {"device_nonce": "<16 hex>"}: 200 {"revoked": {...}}:
//                               its tokens, certificate and enrollment refused from now on
//   POST /v1/admin/devices/restore  {"device_nonce": "<16 hex>"}: 200; 404 if not revoked
//   GET  /v1/admin/devices/revoked  200 {"devices": [{"device_nonce", "revoked_at"}]}
//   POST /v1/admin/device-keys  200 {"key_id": N}: new device tokens are signed with
//                               a new key; tokens of the older keys stay valid
//   POST /v1/admin/metrics      a TOML body of [[metric]] tables (as --config):
//        200 {"registered": [ids]}; a changed configuration of an id is a 409
//   POST /v1/admin/metrics/retire  {"metric_id": N}: 200 {"retired": {"metric_id",
//                               "retired_at"}}: its new reports refused from now on
//                               (BatchOutcome::retired), its estimates still read;
//                               again: the first retirement's time; 404 unknown metric
//   POST /v1/admin/prune        200 {"deleted": {"<id>": n, ...}, "dropped_partitions":
//                               ["YYYY-MM-DD", ...]}: raw reports past each metric's
//                               retention (PostgreSQL: whole daily partitions first)
//   POST /v1/admin/reload       (no body) what SIGHUP does, on this collector
//                               (api/live_reload.h): 200 {"metrics": n, "new_metrics":
//                               [ids], "credentials": "...", "problems": ["..."]}
//                               (problems: what could not be taken in; the rest was)
//
// Admin changes to credentials are made to the credentials file as it is on
// disk (under a lock, so collectors sharing it lose none of each other's
// changes) and saved before they take effect; collectors sharing it take
// them in within their reload interval (--reload-seconds), and the metric
// definitions another collector registers as well (LiveReload).
#ifndef BLUR_COLLECTOR_API_ADMIN_ROUTES_H
#define BLUR_COLLECTOR_API_ADMIN_ROUTES_H

#include <functional>

#include "api/live_reload.h"
#include "auth/authenticator.h"
#include "server/http_server.h"
#include "store/store.h"

namespace blur::collector {

// `admin_only` wraps a handler in the admin-token check.
// `reload` null: no /v1/admin/reload.
void add_admin_routes(http::Server& server, Store& store, auth::Authenticator& authenticator,
                      const std::function<http::Handler(http::Handler)>& admin_only,
                      LiveReload* reload = nullptr);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_ADMIN_ROUTES_H
