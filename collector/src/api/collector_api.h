// The collector's HTTP API, independent of the HTTP server that carries it:
// each endpoint takes the request's pieces and answers (status, JSON body).
// Typed values inside, JSON only here at the edge.
//
//   POST /v1/reports                    body: an encoded blur.ReportBatch
//        200 {"accepted": a, "duplicates": d}  after the commit that holds it
//        400 {"error": ...}   malformed or inconsistent; nothing stored
//        401 / 403 {"error": ...}  no credentials / a batch for another device
//        409 {"error": ..., "report_id": r}   a report id reused with other
//                             content (the device's storage was restored or
//                             its nonce collides): nothing of the batch stored;
//                             resending cannot succeed
//        429 {"error": ...}   another batch of this device nonce is still
//                             queued or committing (refusal device_busy):
//                             retry after Retry-After, once it is answered
//        503 {"error": ...}   storage failed or shutting down; retry later
//   GET  /v1/metrics                    the registered metrics, whole configurations
//   GET  /v1/metrics/{id}/estimate?from=&to=&postprocess=none|norm-sub
//   GET  /v1/metrics/{id}/series?bucket=hour|day&from=&to=&postprocess=
//        (both: Accept text/csv or application/x-ndjson for rows, result_rows.h)
//        (a word-discovery metric's series: at most kMaxDiscoverySeriesPeriods
//        periods with reports, else 400)
//   GET  /healthz
//   (GET /readyz and GET /metrics: api/operator_routes.h)
//
// from/to: RFC 3339, a date or Unix seconds; the estimate covers the buckets
// that start in [from, to) (default: all). A bad parameter is a 400 naming it.
//
// Estimates and series take a Cancellation (util/cancellation.h), checked
// per stored row, per series period and inside word discovery: once it is
// requested they answer cancelled_response() (503). The server runs them on
// a ReadPool (read_pool.h) with a deadline; offline tools never cancel.
#ifndef BLUR_COLLECTOR_API_COLLECTOR_API_H
#define BLUR_COLLECTOR_API_COLLECTOR_API_H

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/result_rows.h"
#include "ingest/enrollment_times.h"
#include "discovery/discovery_cache.h"
#include "ingest/group_commit.h"
#include "observe/collector_metrics.h"
#include "store/store.h"
#include "util/cancellation.h"

namespace blur::collector {

// The status and the JSON text of the body.
struct ApiResponse {
  ApiResponse() = default;
  ApiResponse(int status_code, std::string json) : status(status_code), body(std::move(json)) {}
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // Not sent: for logs and metrics. Why it was refused (if it was), and
  // the reports a POST stored.
  std::optional<observe::Reason> refusal;
  std::optional<uint64_t> reports;
  uint32_t retry_after_seconds = 0;  // for a 429 or 503: when to retry (0: soon)
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// A word-discovery series runs one discovery per period with reports (the
// cache answers the periods unchanged since an earlier read): at most this
// many periods, 31 days of hours, per request.
inline constexpr size_t kMaxDiscoverySeriesPeriods = 744;

class CollectorApi {
 public:
  // `committer` may be null for a read-only API (offline tools): POSTs then
  // answer 503. `metrics`, if given, counts the reports stored, resent and
  // conflicting (when the commit's outcome is known, answered or not).
  CollectorApi(Store& store, GroupCommitter* committer,
               observe::CollectorMetrics* metrics = nullptr)
      : store_(store), committer_(committer), metrics_(metrics), enrollment_times_(store) {}

  // Answers through `reply` (once, possibly from the committer's thread).
  // `device`: the nonce the sender proved it is (nullopt: authentication is
  // off); a batch for another nonce is refused with 403, nothing stored.
  void post_reports(std::string_view body, std::optional<uint64_t> device,
                    std::function<void(ApiResponse)> reply);
  ApiResponse metrics() const;
  // `format`: a 200 answers JSON (kJson), or rows (result_rows.h) as
  // text/csv (kCsv) or application/x-ndjson (kJsonLines); errors are JSON.
  ApiResponse estimate(const std::string& metric_id, const QueryParams& query,
                       const Cancellation& cancel = Cancellation(),
                       ResultFormat format = ResultFormat::kJson) const;
  ApiResponse series(const std::string& metric_id, const QueryParams& query,
                     const Cancellation& cancel = Cancellation(),
                     ResultFormat format = ResultFormat::kJson) const;
  ApiResponse health() const;
  // For /metrics: a device got a token (`renewal`: a known device).
  void enrolled(bool renewal);

  // When each device first enrolled, for quarantine and the device-age
  // counters; enrollment (StoreDeviceRegistry) fills it as it binds.
  EnrollmentTimes& enrollment_times() { return enrollment_times_; }

  // Word-discovery results, shared by every read of this API.
  DiscoveryCache& discovery_cache() const { return discovery_cache_; }

 private:
  Store& store_;
  GroupCommitter* committer_;
  observe::CollectorMetrics* metrics_;
  EnrollmentTimes enrollment_times_;
  mutable DiscoveryCache discovery_cache_;
};

// The answer for an error: its status, {"error": message}, its refusal
// reason and its Retry-After hint.
ApiResponse error_response(const Error& error);
// The HTTP status for an error kind (400, 404, 409, 503).
int http_status(const Error& error);
// The refusal reason for an error kind.
observe::Reason refusal_reason(const Error& error);
// The answer for a read that was cancelled: 503 with refusal "deadline"
// (its deadline passed) or "unavailable" (the collector is stopping).
ApiResponse cancelled_response(Cancellation::Cause cause);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_COLLECTOR_API_H
