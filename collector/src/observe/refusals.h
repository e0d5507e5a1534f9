// Why the collector refused a request, and the counter of refusals by
// reason: blur_collector_requests_refused_total{reason="..."}. Every reason
// is registered at once, so a scrape shows zeros rather than missing series.
//
// How refusals are counted: an answer carries its reason as a token
// (http::Response::refusal, reason_name() below), and the request observer
// counts it once when the answer is sent. Code that refuses by answering
// sets the token; count() is for refusals that never become an answer.
#ifndef BLUR_COLLECTOR_OBSERVE_REFUSALS_H
#define BLUR_COLLECTOR_OBSERVE_REFUSALS_H

#include <array>
#include <optional>
#include <string_view>

#include "observe/prometheus_registry.h"

namespace blur::collector::observe {

enum class Reason {
  kMalformed,         // an undecodable batch or HTTP request, an invalid report
  kUnknownMetric,     // a report names no registered metric
  kTooLarge,          // body, header or path over its limit
  kBadContentType,    // 415
  kNotFound,          // no such path (404)
  kMethodNotAllowed,  // 405
  kConflict,          // a report id reused with other content, a nonce of another device key (409)
  kUnavailable,       // storage failed or shutting down (503)
  kInternal,          // a handler failed (500)
  kUnauthenticated,   // no or bad credentials (401)
  kForbidden,         // credentials without the right (403)
  kContributionBound, // reports over the contribution bound (a 200 that stored fewer)
  kEnrollmentRate,    // over an enrollment rate (429)
  kDeviceBusy,        // a device's batch while another of its batches is in flight (429)
  kImplausibleTime,   // a report observed too long before it arrived
  kDeadline,          // a read (estimate, series) past its deadline (503)
  kOverloaded,        // past the server's connection cap (503)
  kSourceConnections, // past the connections one source address may hold (503)
  kNotAcceptable,     // an Accept header that takes none of the route's formats (406)
  kQuarantine,        // reports of devices enrolled too recently (a 200 that stored fewer)
  kOther,             // a token this list does not know
};
inline constexpr size_t kReasonCount = static_cast<size_t>(Reason::kOther) + 1;

// "malformed", "unknown_metric", ..., "other": the label value and token.
const char* reason_name(Reason reason);
std::optional<Reason> reason_from_name(std::string_view name);

class Refusals {
 public:
  explicit Refusals(Registry& registry);
  void count(Reason reason) { counters_[static_cast<size_t>(reason)]->add(); }
  // A token; one this list does not know counts as kOther.
  void count(std::string_view name);
  uint64_t value(Reason reason) const { return counters_[static_cast<size_t>(reason)]->value(); }

 private:
  std::array<Counter*, kReasonCount> counters_{};
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_REFUSALS_H
