// The request log: one JSON object per line, per answered request, on
// stderr or appended to a file:
//
//   {"time":"2026-11-23T10:00:00.123Z","request_id":"9f86d081884c7d65",
//    "method":"POST","route":"/v1/reports","status":200,"latency_ms":1.84,
//    "reports":12}
//
// "reports" (reports newly stored) and "refusal" (the reason token) appear
// when they apply. By construction it holds nothing a client chose: the
// method only if it is a known one (logged_method()), no path or query
// text, no header (tokens, Authorization), no body, no address.
//
// Each line is one write(2) on a descriptor: no lock, and lines from
// several threads do not interleave (O_APPEND for files; pipes take writes
// up to PIPE_BUF whole, and a line is far shorter).
#ifndef BLUR_COLLECTOR_OBSERVE_REQUEST_LOG_H
#define BLUR_COLLECTOR_OBSERVE_REQUEST_LOG_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "util/outcome.h"

namespace blur::collector::observe {

struct RequestRecord {
  int64_t unix_millis = 0;
  std::string_view request_id;  // 16 hex digits (the X-Request-Id header's value)
  std::string_view method;      // as sent: untrusted
  std::string_view route;       // the route's name
  int status = 0;
  double latency_ms = 0;
  std::optional<uint64_t> reports;
  std::string_view refusal;  // empty: none
};

// What the log shows for a method as sent: a known HTTP method (GET, HEAD,
// POST, PUT, DELETE, CONNECT, OPTIONS, TRACE, PATCH) as itself, any other
// token as kOtherMethod, none ("": refused before a request was read) as
// none.
inline constexpr std::string_view kOtherMethod = "OTHER";
std::string_view logged_method(std::string_view method);

// The record as one JSON line, '\n' included.
std::string request_log_line(const RequestRecord& record);

class RequestLog {
 public:
  // Writes to stderr.
  RequestLog() = default;
  // Appends to `path` (created 0640 if missing).
  static Outcome<std::unique_ptr<RequestLog>> open(const std::string& path);
  ~RequestLog();
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;

  // A failed write is dropped: a request never fails for its log line.
  void write(const RequestRecord& record) noexcept;

 private:
  explicit RequestLog(int fd) : fd_(fd), owned_(true) {}
  int fd_ = 2;
  bool owned_ = false;
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_REQUEST_LOG_H
