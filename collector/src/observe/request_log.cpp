#include "observe/request_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "util/json_writer.h"
#include "util/time_text.h"

namespace blur::collector::observe {

std::string_view logged_method(std::string_view method) {
  // RFC 9110's methods and PATCH (RFC 5789): a client may send any token,
  // and none of its other bytes reach the log.
  static constexpr std::string_view kKnown[] = {"GET",     "HEAD",    "POST",  "PUT",  "DELETE",
                                                "CONNECT", "OPTIONS", "TRACE", "PATCH"};
  for (std::string_view known : kKnown) {
    if (method == known) return known;
  }
  return method.empty() ? std::string_view() : kOtherMethod;
}

std::string request_log_line(const RequestRecord& record) {
  const std::string_view method = logged_method(record.method);
  // Three decimals: microseconds are noise in a log.
  const double latency_ms = std::round(record.latency_ms * 1000) / 1000;
  JsonWriter out;
  out.begin_object()
      .member("time", format_time_millis(record.unix_millis))
      .member("request_id", record.request_id)
      .member("method", method)
      .member("route", record.route)
      .member("status", int64_t{record.status})
      .member("latency_ms", latency_ms);
  if (record.reports) out.member("reports", *record.reports);
  if (!record.refusal.empty()) out.member("refusal", record.refusal);
  out.end_object();
  std::string line = out.take();
  line += '\n';
  return line;
}

Outcome<std::unique_ptr<RequestLog>> RequestLog::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) {
    return invalid("cannot open the log file " + path + ": " + std::strerror(errno));
  }
  return std::unique_ptr<RequestLog>(new RequestLog(fd));
}

RequestLog::~RequestLog() {
  if (owned_) ::close(fd_);
}

void RequestLog::write(const RequestRecord& record) noexcept {
  try {
    const std::string line = request_log_line(record);
    size_t written = 0;
    while (written < line.size()) {
      const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      written += static_cast<size_t>(n);
    }
  } catch (...) {  // out of memory: the line is lost, the request is not
  }
}

}  // namespace blur::collector::observe
