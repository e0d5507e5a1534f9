// blur_collector_http_request_duration_seconds{route, status_class}: one
// histogram per route name and status class (1xx .. 5xx), registered when
// the route is added, so recording is a short scan of the route names and
// the histogram's atomics. Requests that matched no route count under
// route="unmatched".
#ifndef BLUR_COLLECTOR_OBSERVE_REQUEST_DURATIONS_H
#define BLUR_COLLECTOR_OBSERVE_REQUEST_DURATIONS_H

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "observe/prometheus_registry.h"

namespace blur::collector::observe {

inline constexpr const char* kUnmatchedRoute = "unmatched";

class RequestDurations {
 public:
  explicit RequestDurations(Registry& registry);
  // Before the first record(): the routes are fixed while requests run.
  void add_route(const std::string& name);
  // `route`: a name given to add_route(), else the request counts as unmatched.
  void record(std::string_view route, int status, double seconds);

 private:
  struct Route {
    std::string name;
    std::array<Histogram*, 5> by_class{};  // 1xx .. 5xx
  };
  Registry& registry_;
  std::vector<Route> routes_;  // [0]: unmatched
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_REQUEST_DURATIONS_H
