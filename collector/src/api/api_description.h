// The API's OpenAPI 3.1 description (collector/api/openapi.yaml), built into
// the binary and served at GET /openapi.yaml to anyone: it describes the
// routes, holds no secret. tests/deploy checks it against the routes serve
// registers (serve --print-routes) and validates it with Redocly's CLI.
#ifndef BLUR_COLLECTOR_API_API_DESCRIPTION_H
#define BLUR_COLLECTOR_API_API_DESCRIPTION_H

#include <cstddef>

#include "server/embedded_file.h"
#include "server/http_server.h"

namespace blur::collector {

// openapi.yaml (api_description_files.cpp, generated).
extern const EmbeddedFile kApiDescriptionFiles[];
extern const std::size_t kApiDescriptionFilesCount;

// GET /openapi.yaml (application/yaml, with an ETag).
void add_api_description_route(http::Server& server);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_API_DESCRIPTION_H
