#include "server/embedded_file.h"

#include <string>

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

}  // namespace

http::Response embedded_file_response(const http::Request& request, const EmbeddedFile& file) {
  http::Response response;
  response.headers = {
      {"Cache-Control", "no-cache"},
      {"ETag", std::string(file.etag)},
      {"X-Content-Type-Options", "nosniff"},
  };
  if (file.content_type.substr(0, 9) == "text/html") {
    response.headers.emplace_back(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    response.headers.emplace_back("Referrer-Policy", "no-referrer");
  }
  response.content_type = std::string(file.content_type);
  if (etag_matches(request.header("If-None-Match"), file.etag)) {
    response.status = 304;  // the client's copy is this one
    return response;
  }
  response.body = std::string(file.bytes);
  return response;
}

}  // namespace blur::collector
