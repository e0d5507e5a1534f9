// Just enough of an HTTP/1.1 response for the load generator: the status
// line, Content-Length and Connection, and the "accepted" count of the
// collector's JSON answer.
#ifndef BLUR_TOOLS_DEVICE_SIM_HTTP_RESPONSE_H
#define BLUR_TOOLS_DEVICE_SIM_HTTP_RESPONSE_H

#include <cstddef>
#include <cstdint>
#include <string>

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

// The number after "accepted": in a JSON body; 0 if there is none.
uint64_t accepted_of(const char* body, size_t length);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_HTTP_RESPONSE_H
