#include "observe/request_durations.h"

#include <algorithm>

namespace blur::collector::observe {

RequestDurations::RequestDurations(Registry& registry) : registry_(registry) {
  add_route(kUnmatchedRoute);
}

void RequestDurations::add_route(const std::string& name) {
  for (const Route& route : routes_) {
    if (route.name == name) return;
  }
  Route route{name, {}};
  for (int i = 0; i < 5; ++i) {
    route.by_class[static_cast<size_t>(i)] = &registry_.histogram(
        "blur_collector_http_request_duration_seconds",
        "Time from a request's first byte to its answer, by route and status class",
        latency_buckets_seconds(),
        {{"route", name}, {"status_class", std::to_string(i + 1) + "xx"}});
  }
  routes_.push_back(std::move(route));
}

void RequestDurations::record(std::string_view route, int status, double seconds) {
  const Route* found = &routes_[0];
  for (const Route& r : routes_) {
    if (r.name == route) found = &r;
  }
  const int index = std::clamp(status / 100, 1, 5) - 1;
  found->by_class[static_cast<size_t>(index)]->observe(seconds);
}

}  // namespace blur::collector::observe
