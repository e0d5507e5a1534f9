#include "dashboard/dashboard_routes.h"

#include <string>

#include "dashboard/embedded_file.h"
#include "server/json_response.h"

namespace blur::collector {

void add_dashboard_routes(http::Server& server) {
  server.route("GET", "/", {}, [](const http::Request& request, http::Reply reply) {
    reply(embedded_file_response(request, *find_dashboard_file("index.html")));
  });
  server.route(
      "GET", "/static/([^/]+)", {},
      [](const http::Request& request, http::Reply reply) {
        const std::string& name = request.path_params.at(0);
        const EmbeddedFile* file = name == "index.html" ? nullptr : find_dashboard_file(name);
        if (file == nullptr) return reply(http::error_response(404, "no dashboard file " + name));
        reply(embedded_file_response(request, *file));
      },
      "/static/{name}");
}

}  // namespace blur::collector
