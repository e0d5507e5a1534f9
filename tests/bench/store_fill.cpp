// Fills a collector store fast (hourly_fill.h: Store::insert, without
// HTTP): random valid reports of one metric, 64 per device and hourly
// bucket, over the DAYS days of hourly buckets before the current hour. For benchmarks that need a large store behind a serving
// collector (scripts/estimate-isolation-bench.sh); the metric is registered
// as given, so `blur-collector serve --metric SPEC` matches it. SEED (default
// 0) picks the random reports and the device nonces: runs with different
// seeds add different devices (each run writes as its own node, as two
// collectors do; tests/collector/rollup_kill_test.sh).
//
//   store_fill DB METRIC_SPEC REPORTS [DAYS [SEED]]    e.g. store_fill blur.db 100:olh:1:4096:max_reports_per_bucket=64 10000000 30
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

#include "config/metric_rules.h"
#include "hourly_fill.h"
#include "store/store.h"

using namespace blur::collector;

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6) {
    std::fprintf(stderr, "usage: store_fill DB METRIC_SPEC REPORTS [DAYS [SEED]]\n");
    return 2;
  }
  auto metric = parse_metric_spec(argv[2]);
  if (!metric) {
    std::fprintf(stderr, "store_fill: %s\n", metric.error().message.c_str());
    return 2;
  }
  const int64_t reports = std::atoll(argv[3]);
  const int64_t hours = 24 * (argc >= 5 ? std::atoll(argv[4]) : 30);
  const int64_t seed = argc == 6 ? std::atoll(argv[5]) : 0;
  if (reports <= 0 || hours <= 0 || seed < 0 || seed >= (1 << 20)) {
    std::fprintf(stderr, "store_fill: REPORTS and DAYS must be positive, SEED 0..2^20-1\n");
    return 2;
  }
  if (metric->max_reports_per_bucket < 64) {
    std::fprintf(stderr, "store_fill: the metric's max_reports_per_bucket must be at least 64 "
                         "(each device stores 64 reports in its hour)\n");
    return 2;
  }
  auto opened = Store::open(argv[1], Store::Mode::kReadWrite);
  if (!opened) {
    std::fprintf(stderr, "store_fill: %s\n", opened.error().message.c_str());
    return 1;
  }
  auto store = std::move(opened).value();
  if (auto registered = store->register_metric(*metric); !registered) {
    std::fprintf(stderr, "store_fill: %s\n", registered.error().message.c_str());
    return 1;
  }
  const int64_t this_hour = std::time(nullptr) / 3600 * 3600;
  std::mt19937_64 rng(7 + static_cast<uint64_t>(seed));
  const auto start = std::time(nullptr);
  int64_t next_note = 1000000;
  // Nonces far from the load generator's (2^32 per seed); the newest bucket
  // the last whole hour.
  const uint64_t first_nonce = (1ull << 62) + (static_cast<uint64_t>(seed) << 32);
  auto filled = blur_test::fill_hourly(*store, *metric, reports, hours, this_hour - 3600, first_nonce,
                                       rng, [&](int64_t stored) {
                                         if (stored < next_note) return;
                                         std::fprintf(stderr, "store_fill: %lld of %lld reports (%lld s)\n",
                                                      static_cast<long long>(stored),
                                                      static_cast<long long>(reports),
                                                      static_cast<long long>(std::time(nullptr) - start));
                                         next_note += 1000000;
                                       });
  if (!filled) {
    std::fprintf(stderr, "store_fill: %s\n", filled.error().message.c_str());
    return 1;
  }
  const int64_t stored = reports;
  std::printf("store_fill: %lld reports of metric %u over %lld hourly buckets in %lld s\n",
              static_cast<long long>(stored), metric->id, static_cast<long long>(hours),
              static_cast<long long>(std::time(nullptr) - start));
  return 0;
}
