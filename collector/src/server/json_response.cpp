#include "server/json_response.h"

namespace blur::collector::http {

std::string json_text(const nlohmann::json& value) noexcept {
  try {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (...) {
    // Out of memory, or a bug: still valid JSON.
    return R"({"error":"the answer could not be encoded"})";
  }
}

Response json_response(int status, const nlohmann::json& body) {
  Response response;
  response.status = status;
  response.body = json_text(body);
  return response;
}

Response error_response(int status, const std::string& message) {
  try {
    return json_response(status, {{"error", message}});
  } catch (...) {  // building the json object allocates
    Response response;
    response.status = status;
    response.body = R"({"error":"the answer could not be encoded"})";
    return response;
  }
}

}  // namespace blur::collector::http
