// The process's own series, under the names every Prometheus client library
// uses (process_cpu_seconds_total, process_resident_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds), read from
// /proc/self when scraped, and blur_collector_build_info{version} = 1.
#ifndef BLUR_COLLECTOR_OBSERVE_PROCESS_METRICS_H
#define BLUR_COLLECTOR_OBSERVE_PROCESS_METRICS_H

#include "observe/prometheus_registry.h"

namespace blur::collector::observe {

void register_process_metrics(Registry& registry);

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_PROCESS_METRICS_H
