// Collector-side costs: decoding and validating untrusted batches, durable
// SQLite commits (WAL, synchronous=FULL), and estimation.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "blur/report_encoding.h"
#include "device_reports.h"
#include "estimate/metric_estimate.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"
#include "store/sqlite_store.h"

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
  return MetricConfig{1, MechanismId::kBinaryRandomizedResponse, 1000000};
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
  TempStore() {
    char pattern[] = "/tmp/blur-bench-XXXXXX";
    dir = mkdtemp(pattern);
    std::string error;
    store = SqliteStore::open(dir + "/blur.db", &error);
    if (store) store->register_metric(*lookup(1), &error);
  }
  ~TempStore() {
    store.reset();
    std::system(("rm -rf " + dir).c_str());
  }
  std::string dir;
  std::unique_ptr<SqliteStore> store;
};

// One durable transaction per batch (what one POST costs the store).
void BM_InsertBatchDurably(benchmark::State& state) {
  TempStore temp;
  if (!temp.store) return state.SkipWithError("open");
  const size_t count = static_cast<size_t>(state.range(0));
  uint64_t nonce = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Batch batch;
    std::string error;
    const auto bytes = encoded_batch(count, ++nonce);
    decode_batch(bytes.data(), bytes.size(), &batch, &error);
    state.ResumeTiming();
    SqliteStore::InsertResult result;
    if (!temp.store->insert_batch(batch, &result, &error))
      return state.SkipWithError(error.c_str());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_InsertBatchDurably)->Arg(1)->Arg(64)->UseRealTime();

void BM_EstimateBinaryMetric(benchmark::State& state) {
  TempStore temp;
  if (!temp.store) return state.SkipWithError("open");
  const int64_t reports = state.range(0);
  for (int64_t device = 0; device < reports / 64; ++device) {
    Batch batch;
    std::string error;
    const auto bytes = encoded_batch(64, static_cast<uint64_t>(device));
    SqliteStore::InsertResult result;
    if (!decode_batch(bytes.data(), bytes.size(), &batch, &error) ||
        !temp.store->insert_batch(batch, &result, &error)) {
      return state.SkipWithError("fill");
    }
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(estimate_metric(*lookup(1), *temp.store));
  }
  state.counters["reports"] = static_cast<double>(reports);
}
BENCHMARK(BM_EstimateBinaryMetric)->Arg(64000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
