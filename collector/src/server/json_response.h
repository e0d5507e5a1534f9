// Every JSON body the collector sends is written by util/json_writer.h:
// json_text() never throws, and bytes that are not UTF-8 (untrusted text put
// into a message) come out as U+FFFD instead of making nlohmann's dump()
// throw.
#ifndef BLUR_COLLECTOR_SERVER_JSON_RESPONSE_H
#define BLUR_COLLECTOR_SERVER_JSON_RESPONSE_H

#include <nlohmann/json.hpp>
#include <string>

#include "server/http_server.h"
#include "util/json_writer.h"

namespace blur::collector::http {

Response json_response(int status, const nlohmann::json& body);
// {"error": message}
Response error_response(int status, const std::string& message);

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_JSON_RESPONSE_H
