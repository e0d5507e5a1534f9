#include "api/api_description.h"

namespace blur::collector {

void add_api_description_route(http::Server& server) {
  const EmbeddedFile& description = kApiDescriptionFiles[0];
  server.route("GET", "/openapi.yaml", {},
               [&description](const http::Request& request, http::Reply reply) {
                 reply(embedded_file_response(request, description));
               });
}

}  // namespace blur::collector
