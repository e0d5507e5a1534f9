// A small metrics registry rendered in Prometheus's text exposition format
// (version 0.0.4). Each series (a name and a fixed set of label values) is
// registered once, usually at startup, and the caller keeps the returned
// Counter, Gauge or Histogram: updating one is a relaxed atomic operation,
// with no lookup and no lock. Registering and rendering take a mutex.
//
// The metric set is fixed in code, so a bad registration (an invalid name,
// one name with two types or two help texts, a label set registered twice
// with another kind of metric, "le" on a histogram) is a bug: it aborts with
// a message at startup, where any test that starts the collector sees it.
// Registering the same series twice returns the first one.
#ifndef BLUR_COLLECTOR_OBSERVE_PROMETHEUS_REGISTRY_H
#define BLUR_COLLECTOR_OBSERVE_PROMETHEUS_REGISTRY_H

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "observe/counter.h"
#include "observe/gauge.h"
#include "observe/histogram.h"

namespace blur::collector::observe {

using Labels = std::vector<std::pair<std::string, std::string>>;  // name, value; in order

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Counter& counter(const std::string& name, const std::string& help, const Labels& labels = {});
  Gauge& gauge(const std::string& name, const std::string& help, const Labels& labels = {});
  // A gauge read when rendered: `read` must be thread-safe and quick.
  void gauge_function(const std::string& name, const std::string& help, const Labels& labels,
                      std::function<double()> read);
  // A counter kept elsewhere (the kernel's CPU time), read when rendered;
  // `read` must never decrease.
  void counter_function(const std::string& name, const std::string& help, const Labels& labels,
                        std::function<double()> read);
  Histogram& histogram(const std::string& name, const std::string& help,
                       const std::vector<double>& upper_bounds, const Labels& labels = {});

  // Every family in registration order: HELP and TYPE lines, then its
  // samples. Ends with a newline.
  std::string render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    Labels labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::function<double()> read;
    std::unique_ptr<Histogram> histogram;
  };
  struct Family {
    std::string name;
    std::string help;
    Type type;
    std::vector<Series> series;
  };

  // The series, found or added (empty) under the mutex's `lock`.
  Series& series(const std::string& name, const std::string& help, Type type, const Labels& labels,
                 bool* added);
  static void render_family(const Family& family, std::string* out);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Family>> families_;
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_PROMETHEUS_REGISTRY_H
