#include "observe/request_observer.h"

#include <chrono>

namespace blur::collector::observe {

void RequestObserver::add_routes(const http::Server& server) {
  for (const std::string& name : server.route_names()) metrics_.requests.add_route(name);
}

void RequestObserver::record(const http::Completion& completion) {
  const std::string_view route = completion.route.empty() ? kUnmatchedRoute : completion.route;
  const std::string_view refusal = completion.response->refusal;
  metrics_.requests.record(route, completion.status,
                           std::chrono::duration<double>(completion.latency).count());
  if (!refusal.empty()) metrics_.refusals.count(refusal);
  if (refusal == observe::reason_name(Reason::kUnauthenticated) ||
      refusal == observe::reason_name(Reason::kForbidden)) {
    metrics_.auth_failures.add();
  }
  if (log_ == nullptr) return;
  RequestRecord record;
  record.unix_millis = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  record.request_id = completion.request_id;
  record.method = completion.method;
  record.route = route;
  record.status = completion.status;
  record.latency_ms = std::chrono::duration<double, std::milli>(completion.latency).count();
  for (const auto& [name, value] : completion.response->counts) {
    if (name == "reports") record.reports = value;
  }
  record.refusal = refusal;
  log_->write(record);
}

}  // namespace blur::collector::observe
