#include "dashboard/dashboard_routes.h"

#include <string>
#include <string_view>

#include "dashboard/embedded_file.h"
#include "server/json_response.h"

namespace blur::collector {

namespace {

// If-None-Match is "*" or a comma-separated list of (maybe weak) ETags.
bool etag_matches(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    const std::size_t comma = if_none_match.find(',');
    std::string_view tag = if_none_match.substr(0, comma);
    while (!tag.empty() && (tag.front() == ' ' || tag.front() == '\t')) tag.remove_prefix(1);
    while (!tag.empty() && (tag.back() == ' ' || tag.back() == '\t')) tag.remove_suffix(1);
    if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
    if (tag == "*" || tag == etag) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

http::Response serve(const http::Request& request, const EmbeddedFile& file) {
  http::Response response;
  response.headers = {
      {"Cache-Control", "no-cache"},
      {"ETag", std::string(file.etag)},
      {"X-Content-Type-Options", "nosniff"},
  };
  if (file.content_type.substr(0, 9) == "text/html") {
    // The page runs only its own scripts and talks only to this collector.
    response.headers.emplace_back(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    response.headers.emplace_back("Referrer-Policy", "no-referrer");
  }
  response.content_type = std::string(file.content_type);
  if (etag_matches(request.header("If-None-Match"), file.etag)) {
    response.status = 304;  // the browser's copy is this one
    return response;
  }
  response.body = std::string(file.bytes);
  return response;
}

}  // namespace

void add_dashboard_routes(http::Server& server) {
  server.route("GET", "/", {}, [](const http::Request& request, http::Reply reply) {
    reply(serve(request, *find_dashboard_file("index.html")));
  });
  server.route("GET", "/static/([^/]+)", {}, [](const http::Request& request, http::Reply reply) {
    const std::string& name = request.path_params.at(0);
    const EmbeddedFile* file = name == "index.html" ? nullptr : find_dashboard_file(name);
    if (file == nullptr) return reply(http::error_response(404, "no dashboard file " + name));
    reply(serve(request, *file));
  });
}

}  // namespace blur::collector
