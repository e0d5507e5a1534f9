// Collector-side costs: decoding and validating untrusted batches, durable
// SQLite commits (WAL, synchronous=FULL) of groups of batches, and
// estimation from stored aggregates.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "api/metric_estimate.h"
#include "blur/report/report_encoding.h"
#include "device_reports.h"
#include "hourly_fill.h"
#include "incoming_reports.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"
#include "random_reports.h"
#include <random>

#include "api/collector_api.h"
#include "estimate/device_clustering.h"
#include "random_reports.h"
#include "store/store.h"

namespace {

using namespace blur::collector;

std::vector<uint8_t> encoded_batch(size_t count, uint64_t nonce) {
  std::vector<blur::Report> reports(count);
  for (size_t i = 0; i < count; ++i) {
    reports[i] = blur_test::scalar_report(i, 1, blur::MechanismId::kBinaryRandomizedResponse,
                                          1000000, 2, i % 3 == 0);
  }
  std::vector<uint8_t> bytes(blur::kBatchHeaderSize + count * blur::kMaxEncodedScalarReportSize);
  size_t written = 0;
  if (blur::encode_batch(nonce, reports.data(), count, bytes.data(), bytes.size(), &written) !=
      blur::Status::kOk) {
    return {};
  }
  bytes.resize(written);
  return bytes;
}

std::optional<MetricConfig> lookup(uint32_t id) {
  if (id != 1) return std::nullopt;
  MetricConfig metric{1, MechanismId::kBinaryRandomizedResponse, 1000000};
  // A batch's 64 reports share one device and bucket: all within the
  // contribution bound, so every report is stored and counted.
  metric.max_reports_per_bucket = 64;
  return metric;
}

void BM_DecodeAndValidate(benchmark::State& state) {
  const auto bytes = encoded_batch(static_cast<size_t>(state.range(0)), 5);
  for (auto _ : state) {
    Batch batch;
    std::string error;
    if (!decode_batch(bytes.data(), bytes.size(), &batch, &error) ||
        !validate_batch(batch, lookup).empty()) {
      return state.SkipWithError("decode");
    }
    benchmark::DoNotOptimize(batch);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DecodeAndValidate)->Arg(1)->Arg(64);

struct TempStore {
  explicit TempStore(std::vector<MetricConfig> metrics = {*lookup(1)}) {
    char pattern[] = "/tmp/blur-bench-XXXXXX";
    dir = mkdtemp(pattern);
    auto opened = Store::open(dir + "/blur.db", Store::Mode::kReadWrite);
    if (!opened) return;
    store = std::move(opened).value();
    for (const MetricConfig& m : metrics) (void)store->register_metric(m);
  }
  ~TempStore() {
    store.reset();
    std::system(("rm -rf " + dir).c_str());
  }
  std::string dir;
  std::unique_ptr<Store> store;
};

// Durable transactions of `group` batches of `count` reports (what a group
// commit costs the store); items are reports.
void BM_InsertGroupDurably(benchmark::State& state) {
  TempStore temp;
  if (!temp.store) return state.SkipWithError("open");
  const size_t count = static_cast<size_t>(state.range(0));
  const size_t group = static_cast<size_t>(state.range(1));
  uint64_t nonce = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Batch> batches(group);
    std::vector<ReceivedBatch> received;
    for (Batch& batch : batches) {
      std::string error;
      const auto bytes = encoded_batch(count, ++nonce);
      decode_batch(bytes.data(), bytes.size(), &batch, &error);
      received.push_back({&batch, 1795000000});
    }
    state.ResumeTiming();
    if (!temp.store->insert(received)) return state.SkipWithError("insert");
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * state.range(1));
}
BENCHMARK(BM_InsertGroupDurably)
    ->Args({1, 1})
    ->Args({64, 1})
    ->Args({1, 256})
    ->Args({64, 32})
    ->UseRealTime();

// Each batch as received at the benchmarks' clock (2026-11-18).
std::vector<ReceivedBatch> received_now(const std::vector<Batch>& batches) {
  std::vector<ReceivedBatch> received;
  for (const Batch& b : batches) received.push_back({&b, 1795000000});
  return received;
}

// Device batches as a fleet sends them (blur-device-sim load's default): 4
// reports each of 16 metrics (the default contribution bound), every batch
// a new device, all in the current hour. The store first holds `prefill`
// such batches, so that its tables are larger than a few pages and a
// commit's rows land where a serving store's would; then each iteration
// commits `group` batches durably. Items are reports; the CPU column is the
// whole process's (the WAL checkpointer's thread included).
void BM_InsertDeviceBatchesDurably(benchmark::State& state) {
  constexpr uint32_t kMetrics = 16;
  constexpr uint64_t kPerMetric = 4;
  std::vector<MetricConfig> metrics;
  for (uint32_t id = 1; id <= kMetrics; ++id) {
    metrics.push_back(MetricConfig{id, MechanismId::kBinaryRandomizedResponse, 1000000});
  }
  TempStore temp(metrics);
  if (!temp.store) return state.SkipWithError("open");
  uint64_t nonce = 0;
  auto make = [&](size_t batches) {
    std::vector<Batch> out(batches);
    for (Batch& batch : out) {
      batch.sdk_version = 256;
      batch.device_nonce = 0x9e3779b97f4a7c15ull * ++nonce;  // spread like random nonces
      uint64_t id = 0;
      for (uint32_t metric = 1; metric <= kMetrics; ++metric) {
        for (uint64_t k = 0; k < kPerMetric; ++k) {
          ++id;
          IncomingReport r = blur_test::binary_report(id, (id * 7) % 3 == 0);
          r.metric_id = metric;
          r.observed_minute = 1795000000 / 60;
          batch.reports.push_back(r);
        }
      }
    }
    return out;
  };
  auto insert = [&](const std::vector<Batch>& batches) {
    auto outcomes = temp.store->insert(received_now(batches));
    if (!outcomes) return false;
    for (const BatchOutcome& o : outcomes.value()) {
      if (o.inserted != kMetrics * kPerMetric) return false;
    }
    return true;
  };
  for (int64_t filled = 0; filled < state.range(0); filled += 64) {
    if (!insert(make(64))) return state.SkipWithError("prefill");
  }
  const size_t group = static_cast<size_t>(state.range(1));
  for (auto _ : state) {
    state.PauseTiming();
    const std::vector<Batch> batches = make(group);
    state.ResumeTiming();
    if (!insert(batches)) return state.SkipWithError("insert");
  }
  state.SetItemsProcessed(state.iterations() * group * kMetrics * kPerMetric);
}
BENCHMARK(BM_InsertDeviceBatchesDurably)
    ->Args({10000, 16})
    ->Args({10000, 64})
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// Word discovery into one large bucket: a pem metric's hourly bucket that
// already holds `state.range(0)` reports (nearly one sparse cell each),
// then commits of 4 single-report batches (4 connections' worth). Before
// aggregate rows were capped (Store::kAggregateRowBytes) every commit
// rewrote the whole bucket's row; now at most about 64 KiB of it.
void BM_InsertPemIntoLargeBucket(benchmark::State& state) {
  MetricConfig pem{11, MechanismId::kPrefixExtension, 4000000, 16};
  pem.max_reports_per_bucket = 8;
  TempStore temp({pem});
  if (!temp.store) return state.SkipWithError("open");
  std::mt19937_64 rng(5);
  uint64_t nonce = 0;
  auto make = [&](size_t batches, size_t per_batch) {
    std::vector<Batch> out(batches);
    for (Batch& batch : out) {
      batch.sdk_version = 256;
      batch.device_nonce = ++nonce;
      for (uint64_t id = 1; id <= per_batch; ++id) {
        IncomingReport r = blur_test::random_report(pem, rng);
        r.report_id = id;
        r.observed_minute = 1795000000 / 60;
        batch.reports.push_back(r);
      }
    }
    return out;
  };
  auto insert = [&](const std::vector<Batch>& batches) {
    return static_cast<bool>(temp.store->insert(received_now(batches)));
  };
  for (int64_t filled = 0; filled < state.range(0); filled += 256 * 8) {
    if (!insert(make(256, 8))) return state.SkipWithError("prefill");
  }
  for (auto _ : state) {
    state.PauseTiming();
    const std::vector<Batch> batches = make(4, 1);
    state.ResumeTiming();
    if (!insert(batches)) return state.SkipWithError("insert");
  }
  state.SetItemsProcessed(state.iterations() * 4);
}
BENCHMARK(BM_InsertPemIntoLargeBucket)->Arg(0)->Arg(100000)->Arg(400000)->UseRealTime();

// An estimate reads aggregates only: its time must not grow with the
// number of stored reports. GRR and OLH over d = 4096; reports spread over
// `days` days of hourly buckets ending at kBenchNow, each device reporting
// one hour's 64 reports in that hour (reports observed days before they
// arrive would be bucketed at arrival). Then the closed days are rolled up
// (Store::roll_up, as a serving collector does), unless `roll_up` is false:
// an estimate then reads every hourly row, as before day roll-ups.
constexpr int64_t kBenchNow = 1795000000;

// Fills the store with `reports` reports of `metric` over `days` days and,
// if `roll_up`, rolls up the closed days; false (and the state told) if
// that failed.
bool fill_store(benchmark::State& state, Store& store, const MetricConfig& metric, int64_t reports,
                int64_t days, bool roll_up) {
  std::mt19937_64 rng(3);
  if (!blur_test::fill_hourly(store, metric, reports, days * 24, kBenchNow, 0, rng)) {
    state.SkipWithError("fill");
    return false;
  }
  if (roll_up && !store.roll_up(kBenchNow)) {
    state.SkipWithError("roll up");
    return false;
  }
  return true;
}

// range(0): the mechanism (range(1): reports, range(2): 1 for the daily series).
MetricConfig bench_metric(const benchmark::State& state, uint32_t domain = 4096) {
  MetricConfig metric{2, static_cast<MechanismId>(state.range(0)), 1000000, domain};
  metric.max_reports_per_bucket = 64;  // the fill stores every report
  return metric;
}

void estimate_from_store(benchmark::State& state, int64_t days, bool roll_up,
                         uint32_t domain = 4096) {
  const MetricConfig metric = bench_metric(state, domain);
  const int64_t reports = state.range(1);
  TempStore temp({metric});
  if (!temp.store) return state.SkipWithError("open");
  if (!fill_store(state, *temp.store, metric, reports, days, roll_up)) return;
  CollectorApi api(*temp.store, nullptr);
  const bool series = state.range(2) != 0;
  for (auto _ : state) {
    const ApiResponse answer = series ? api.series("2", {{"bucket", "day"}}) : api.estimate("2", {});
    if (answer.status != 200) return state.SkipWithError("estimate");
    benchmark::DoNotOptimize(answer);
  }
  state.SetLabel(std::string(blur::mechanism_name(metric.mechanism)) +
                 " d=" + std::to_string(metric.domain_size) + (series ? " daily series" : "") +
                 (roll_up ? "" : ", hourly rows only"));
  state.counters["reports"] = static_cast<double>(reports);
}

// An estimate reads aggregates only: its time must not grow with the
// number of stored reports. GRR and OLH over d = 4096; reports spread over
// 30 days of hourly buckets ending at kBenchNow, each device reporting one
// hour's 64 reports in that hour (reports observed days before they arrive
// would be bucketed at arrival); then the closed days are rolled up
// (Store::roll_up, as a serving collector does). The figures of
// docs/collector.md ("Measured"); answers written as JSON included.
void thirty_day_cases(benchmark::internal::Benchmark* b) {
  for (const int64_t series : {0, 1}) {
    for (const int64_t mechanism : {2, 8}) b->Args({mechanism, 100000, series});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
void BM_EstimateFromStore(benchmark::State& state) { estimate_from_store(state, 30, true); }
BENCHMARK(BM_EstimateFromStore)->Apply(thirty_day_cases);
// The same without day rows: every read takes the 720 hourly rows.
void BM_EstimateFromHourlyRows(benchmark::State& state) { estimate_from_store(state, 30, false); }
BENCHMARK(BM_EstimateFromHourlyRows)->Apply(thirty_day_cases);
// A 365-day daily series: 365 estimates, each of d = range(3) values (at
// d = 4096 an answer of 1.5 million estimates, about 300 MB of JSON).
void BM_EstimateFromStore365Days(benchmark::State& state) {
  estimate_from_store(state, 365, true, static_cast<uint32_t>(state.range(3)));
}
BENCHMARK(BM_EstimateFromStore365Days)
    ->Args({2, 100000, 1, 16})
    ->Args({8, 100000, 1, 16})
    ->Args({2, 100000, 1, 4096})
    ->Args({8, 100000, 1, 4096})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// Where the 365-day daily series' time goes at d = range(3): range(4) is
// the part measured, each including the ones before it:
//   0: the rows read (Store::period_aggregates per day and the devices'
//      counts, as the series route reads them);
//   1: + every period's estimates, typed (estimate_table), no text;
//   2: + the answer written: the whole series as JSON (every value of
//      every day: what a client asking for the table gets);
//   3: the answer a dashboard asks for: values=<one value> (one line of
//      the chart, 365 estimates).
// Goal (issue 28): a 365-day daily series under 200 ms.
void BM_Series365DaysParts(benchmark::State& state) {
  const MetricConfig metric = bench_metric(state, static_cast<uint32_t>(state.range(3)));
  TempStore temp({metric});
  if (!temp.store) return state.SkipWithError("open");
  if (!fill_store(state, *temp.store, metric, state.range(1), 365, true)) return;
  CollectorApi api(*temp.store, nullptr);
  const int64_t part = state.range(4);
  size_t bytes = 0;
  for (auto _ : state) {
    if (part >= 2) {
      const QueryParams query = part == 2 ? QueryParams{{"bucket", "day"}}
                                          : QueryParams{{"bucket", "day"}, {"values", "7"}};
      const ApiResponse answer = api.series("2", query);
      if (answer.status != 200) return state.SkipWithError("series");
      bytes = answer.body.size();
      benchmark::DoNotOptimize(answer);
      continue;
    }
    auto counts = temp.store->device_counts(metric, {}, 86400);
    auto periods = temp.store->period_aggregates(metric, {}, 86400, true);
    if (!counts || !periods || periods->empty()) return state.SkipWithError("read");
    benchmark::DoNotOptimize(counts);
    if (part == 0) continue;
    for (const PeriodAggregate& period : *periods) {
      const DeviceClustering clustering = metric_clustering(
          metric, period.aggregate.reports(), DeviceCounts{}, period.buckets);
      auto table = estimate_table(period.aggregate, clustering, PostProcessing::kNone, {});
      if (!table) return state.SkipWithError("estimate");
      benchmark::DoNotOptimize(table);
    }
  }
  static constexpr const char* kParts[] = {"rows read", "+ estimates", "+ JSON, full table",
                                           "dashboard form: values=7"};
  state.SetLabel(std::string(blur::mechanism_name(metric.mechanism)) +
                 " d=" + std::to_string(metric.domain_size) + " 365-day daily series, " +
                 kParts[part] + " (goal < 200 ms)");
  if (bytes != 0) state.counters["answer_MB"] = static_cast<double>(bytes) / 1e6;
}
void series_parts_cases(benchmark::internal::Benchmark* b) {
  for (const int64_t mechanism : {2, 8}) {
    for (const int64_t part : {0, 1, 2, 3}) b->Args({mechanism, 100000, 1, 4096, part});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_Series365DaysParts)->Apply(series_parts_cases);
// What the roll-up changes in such a series: the store's read alone
// (Store::period_aggregates per day over 365 days, d = 4096, 10^6 reports:
// a day row per day and today's hourly rows, or about 8,000 hourly rows
// (15,625 devices' hours at random) when range(2) is 0).
void BM_ReadDailyAggregates365Days(benchmark::State& state) {
  const MetricConfig metric = bench_metric(state);
  TempStore temp({metric});
  if (!temp.store) return state.SkipWithError("open");
  const bool roll_up = state.range(2) != 0;
  if (!fill_store(state, *temp.store, metric, state.range(1), 365, roll_up)) return;
  for (auto _ : state) {
    auto periods = temp.store->period_aggregates(metric, {}, 86400, false);
    if (!periods || periods->empty()) return state.SkipWithError("read");
    benchmark::DoNotOptimize(periods);
  }
  state.SetLabel(std::string(blur::mechanism_name(metric.mechanism)) +
                 (roll_up ? " day rows" : " hourly rows only"));
}
BENCHMARK(BM_ReadDailyAggregates365Days)
    ->Args({2, 1000000, 1})
    ->Args({2, 1000000, 0})
    ->Args({8, 1000000, 1})
    ->Args({8, 1000000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// 10^7 stored reports over 30 days (goal: within 2x of the 10^5 case):
// run with --benchmark_filter=EstimateFromStore10M (filling the store takes
// a minute or two per mechanism).
void BM_EstimateFromStore10M(benchmark::State& state) { estimate_from_store(state, 30, true); }
BENCHMARK(BM_EstimateFromStore10M)
    ->Args({2, 10000000, 0})
    ->Args({8, 10000000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
