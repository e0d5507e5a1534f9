// The HTTP server's completion hook for the collector: each answered
// request is timed into the request-duration histogram, its refusal (if
// any) counted by reason, and (optionally) written to the request log.
#ifndef BLUR_COLLECTOR_OBSERVE_REQUEST_OBSERVER_H
#define BLUR_COLLECTOR_OBSERVE_REQUEST_OBSERVER_H

#include "observe/collector_metrics.h"
#include "observe/request_log.h"
#include "server/http_server.h"

namespace blur::collector::observe {

class RequestObserver {
 public:
  // `log` may be null: no request log. Both must outlive the servers.
  RequestObserver(CollectorMetrics& metrics, RequestLog* log) : metrics_(metrics), log_(log) {}

  // Before the server starts: its routes get their histograms.
  void add_routes(const http::Server& server);
  void record(const http::Completion& completion);
  http::CompletionHook hook() {
    return [this](const http::Completion& completion) { record(completion); };
  }

 private:
  CollectorMetrics& metrics_;
  RequestLog* log_;
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_REQUEST_OBSERVER_H
