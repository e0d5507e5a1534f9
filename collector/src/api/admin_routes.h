// The admin API (an admin bearer token on every call):
//
//   POST /v1/admin/tokens       {"role": "reader"|"admin"|"enrollment", "name": "..."}
//        200 {"token": "...", "role": ..., "name": ...}   shown once; only its digest is kept
//   POST /v1/admin/device-keys  200 {"key_id": N}: new device tokens are signed with
//                               a new key; tokens of the older keys stay valid
//   POST /v1/admin/metrics      a TOML body of [[metric]] tables (as --config):
//        200 {"registered": [ids]}; a changed configuration of an id is a 409
//   POST /v1/admin/prune        200 {"deleted": {"<id>": n, ...}}: raw reports past
//                               each metric's retention
//
// Admin changes to credentials are written to the credentials file first;
// collectors sharing it see them at their next start.
#ifndef BLUR_COLLECTOR_API_ADMIN_ROUTES_H
#define BLUR_COLLECTOR_API_ADMIN_ROUTES_H

#include <functional>

#include "auth/authenticator.h"
#include "server/http_server.h"
#include "store/store.h"

namespace blur::collector {

// `admin_only` wraps a handler in the admin-token check.
void add_admin_routes(http::Server& server, Store& store, auth::Authenticator& authenticator,
                      const std::function<http::Handler(http::Handler)>& admin_only);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_ADMIN_ROUTES_H
