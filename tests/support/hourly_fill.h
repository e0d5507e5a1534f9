// A store filled fast, through Store::insert (the group commit's own call,
// without HTTP): random valid reports of one metric, each device storing 64
// in one hourly bucket (reports observed days before they arrive would be
// bucketed at arrival, so each arrives in its hour), devices spread evenly
// over `hours` hourly buckets ending with `newest_hour`, 256 devices per
// transaction. The metric's max_reports_per_bucket must be at least 64.
// Used by BM_EstimateFromStore and the store_fill tool.
#ifndef BLUR_TESTS_SUPPORT_HOURLY_FILL_H
#define BLUR_TESTS_SUPPORT_HOURLY_FILL_H

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "random_reports.h"
#include "store/store.h"

namespace blur_test {

// Device nonces first_nonce + 1, + 2, ...; `progress(stored)` after each
// transaction (may be empty).
inline blur::collector::Fallible fill_hourly(
    blur::collector::Store& store, const blur::collector::MetricConfig& metric, int64_t reports,
    int64_t hours, int64_t newest_hour, uint64_t first_nonce, std::mt19937_64& rng,
    const std::function<void(int64_t stored)>& progress = {}) {
  using namespace blur::collector;
  uint64_t nonce = first_nonce;
  for (int64_t stored = 0; stored < reports;) {
    std::vector<Batch> batches(256);
    std::vector<ReceivedBatch> received;
    for (Batch& batch : batches) {
      batch.device_nonce = ++nonce;
      const int64_t hour =
          newest_hour - static_cast<int64_t>(rng() % static_cast<uint64_t>(hours)) * 3600;
      for (uint64_t id = 1; id <= 64 && stored < reports; ++id, ++stored) {
        IncomingReport r = random_report(metric, rng);
        r.report_id = id;
        r.observed_minute = static_cast<uint32_t>(hour / 60);
        batch.reports.push_back(r);
      }
      if (!batch.reports.empty()) received.push_back({&batch, hour});
    }
    if (auto inserted = store.insert(received); !inserted) return inserted.error();
    if (progress) progress(stored);
  }
  return done();
}

}  // namespace blur_test

#endif  // BLUR_TESTS_SUPPORT_HOURLY_FILL_H
