// Just enough of an HTTP/1.1 response for the load generator: the status
// line, Content-Length and Connection, and the counts of the collector's
// JSON answer ("accepted", "over_limit", ...).
#ifndef BLUR_TOOLS_DEVICE_SIM_HTTP_RESPONSE_H
#define BLUR_TOOLS_DEVICE_SIM_HTTP_RESPONSE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace blur::sim {

// What a parse of the bytes received so far found.
struct Response {
  enum class State { kIncomplete, kComplete, kMalformed };
  State state = State::kIncomplete;
  int status = 0;
  size_t length = 0;  // of the whole response: headers and body
  size_t body_offset = 0;
  bool close = false;  // "Connection: close"
  std::string problem;
};

// The first response in `in` (chunked bodies are refused as malformed).
Response parse_response(const std::string& in);

// The number after "key": in a JSON body (key without quotes, e.g.
// "accepted"); 0 if there is none.
uint64_t count_of(const char* body, size_t length, std::string_view key);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_HTTP_RESPONSE_H
