#include "observe/refusals.h"

namespace blur::collector::observe {

namespace {
constexpr const char* kNames[kReasonCount] = {
    "malformed",          "unknown_metric",     "too_large",        "bad_content_type",
    "not_found",          "method_not_allowed", "conflict",         "unavailable",
    "internal",           "unauthenticated",    "forbidden",        "contribution_bound",
    "enrollment_rate",    "device_busy",        "implausible_time", "deadline",
    "overloaded",         "source_connections", "not_acceptable",   "quarantine",
    "other"};
}  // namespace

const char* reason_name(Reason reason) { return kNames[static_cast<size_t>(reason)]; }

std::optional<Reason> reason_from_name(std::string_view name) {
  for (size_t i = 0; i < kReasonCount; ++i) {
    if (name == kNames[i]) return static_cast<Reason>(i);
  }
  return std::nullopt;
}

Refusals::Refusals(Registry& registry) {
  for (size_t i = 0; i < kReasonCount; ++i) {
    counters_[i] =
        &registry.counter("blur_collector_requests_refused_total",
                          "Requests answered with an error, by reason", {{"reason", kNames[i]}});
  }
}

void Refusals::count(std::string_view name) {
  count(reason_from_name(name).value_or(Reason::kOther));
}

}  // namespace blur::collector::observe
