#include "server/json_response.h"

namespace blur::collector::http {

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
