// What the contribution bound's counts per (metric, bucket, device) say
// about the devices behind a set of buckets: each device's reports m_d
// summed over the buckets, then n = sum m_d, the devices, S2 = sum m_d^2
// and max m_d. The variance of an estimate needs them when a device sends
// several reports (estimate/device_clustering.h).
#ifndef BLUR_COLLECTOR_STORE_DEVICE_COUNTS_H
#define BLUR_COLLECTOR_STORE_DEVICE_COUNTS_H

#include <cstdint>

namespace blur::collector {

struct DeviceCounts {
  uint64_t reports = 0;      // sum_d m_d
  uint64_t devices = 0;      // distinct devices
  double sum_squares = 0;    // sum_d m_d^2 (in double: it may pass 2^64)
  uint64_t max_reports = 0;  // max_d m_d
};

// The counts of one period of buckets (a series point), by its start.
struct PeriodDeviceCounts {
  int64_t period_start = 0;
  DeviceCounts counts;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_STORE_DEVICE_COUNTS_H
