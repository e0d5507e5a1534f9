// What a word-discovery (pem) estimate costs the collector, through the
// endpoint code the server runs (CollectorApi over a real SQLite store):
//
// - honest: 10^6 devices, one word each, Zipf(1.1) over 20,000 words of 3
//   to 10 characters, randomized by the SDK's mechanism;
// - adversarial: 10^6 reports crafted to be the most expensive input we
//   know: at every level, the true hashes of random prefixes that all
//   reach significance (2,000 random 16-character words, 500 devices
//   each, every level's prefixes distinct), so the beam is full of
//   candidates worth extending at every level;
// - sparse: one device posting 4 uniformly random reports per hour for 720
//   hours (2,880 reports, one distinct cell each: what a device within its
//   contribution bound can do), and 10 such devices (28,800), read as one
//   estimate and as hourly and daily series.
//
// pem at epsilon 4 over words of up to 16 characters: 15 levels x 2^14
// seeds x 2^6 buckets, the largest tally pem has.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/collector_api.h"
#include "blur/discovery/prefix_extension.h"
#include "discovery/word_discovery.h"
#include "random_reports.h"
#include "store/store.h"

namespace {

using namespace blur::collector;

constexpr int64_t kNow = 1795000000;  // every report is received now

MetricConfig pem_metric() {
  MetricConfig metric{11, MechanismId::kPrefixExtension, 4000000, 16};
  metric.max_reports_per_bucket = 64;  // one batch per device and bucket, all stored
  return metric;
}

// A random source for the SDK's randomizer (its Random concept).
class BenchRandom {
 public:
  explicit BenchRandom(uint64_t seed) : rng_(seed) {}
  blur::Status uniform(uint64_t bound, uint64_t* out) {
    *out = std::uniform_int_distribution<uint64_t>(0, bound - 1)(rng_);
    return blur::Status::kOk;
  }
  std::mt19937_64& engine() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

blur::Word random_word(std::mt19937_64& rng, uint32_t length) {
  blur::Word word{0, 0, length};
  for (uint32_t i = 0; i < length; ++i) word = word.with(i, 1 + static_cast<uint32_t>(rng() % 26));
  return word;
}

IncomingReport pem_report(const MetricConfig& metric, uint32_t seed, uint32_t bucket) {
  IncomingReport r = blur_test::report_of(metric);
  r.hash_a = seed >> 16;
  r.hash_b = seed & 0xFFFF;
  r.value = bucket;
  return r;
}

// Reports as devices would post them: `per_device` per batch, `batches`
// stored per transaction, each report observed at its own minute.
struct Filler {
  Store& store;
  uint64_t nonce = 0;
  std::vector<Batch> pending;
  bool ok = true;

  void add(uint64_t device, IncomingReport report, uint32_t minute) {
    if (pending.empty() || pending.back().device_nonce != device) {
      if (pending.size() == 256) flush();
      pending.emplace_back();
      pending.back().sdk_version = 256;
      pending.back().device_nonce = device;
    }
    report.report_id = pending.back().reports.size() + 1 + 1000 * nonce++;
    report.observed_minute = minute;
    pending.back().reports.push_back(report);
  }
  void flush() {
    std::vector<ReceivedBatch> received;
    for (const Batch& b : pending) received.push_back({&b, kNow});
    if (!received.empty() && !store.insert(received)) ok = false;
    pending.clear();
  }
};

struct TempStore {
  TempStore() {
    char pattern[] = "/tmp/blur-discovery-bench-XXXXXX";
    dir = mkdtemp(pattern);
    auto opened = Store::open(dir + "/blur.db", Store::Mode::kReadWrite);
    if (!opened) return;
    store = std::move(opened).value();
    (void)store->register_metric(pem_metric());
  }
  ~TempStore() {
    store.reset();
    std::system(("rm -rf " + dir).c_str());
  }
  std::string dir;
  std::unique_ptr<Store> store;
};

enum Population { kHonest = 0, kAdversarial = 1, kSparse = 2 };

// One filled store per population and size, shared by the benchmarks.
Store* filled_store(Population population, int64_t reports) {
  static std::map<std::pair<int, int64_t>, std::unique_ptr<TempStore>> stores;
  auto& slot = stores[{population, reports}];
  if (slot) return slot->store.get();
  slot = std::make_unique<TempStore>();
  if (!slot->store) return nullptr;
  const MetricConfig metric = pem_metric();
  const auto pem = blur::PrefixExtension::create(metric.epsilon_micros, metric.domain_size);
  BenchRandom random(7);
  Filler fill{*slot->store, 0, {}, true};
  const uint32_t minute = static_cast<uint32_t>(kNow / 60) - 30;
  if (population == kHonest) {
    // Zipf(1.1) over 20,000 random words.
    std::vector<blur::Word> words;
    std::vector<double> weights;
    for (int i = 0; i < 20000; ++i) {
      words.push_back(random_word(random.engine(), 3 + static_cast<uint32_t>(i % 8)));
      weights.push_back(1.0 / std::pow(i + 1, 1.1));
    }
    std::discrete_distribution<size_t> zipf(weights.begin(), weights.end());
    for (int64_t i = 0; i < reports; ++i) {
      uint32_t seed = 0, bucket = 0;
      (void)pem.value().randomize(random, words[zipf(random.engine())], &seed, &bucket);
      fill.add(static_cast<uint64_t>(i / 64) + 1, pem_report(metric, seed, bucket), minute);
    }
  } else if (population == kAdversarial) {
    // Each report the exact hash of its word's prefix at its level (no
    // randomization: the strongest push), words of 16 random characters.
    const uint32_t levels = blur::PrefixExtension::levels(metric.domain_size);
    const uint32_t bits = blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
    const int64_t word_count = std::max<int64_t>(1, reports / 500);
    std::vector<blur::Word> words;
    for (int64_t i = 0; i < word_count; ++i) words.push_back(random_word(random.engine(), 16));
    for (int64_t i = 0; i < reports; ++i) {
      const blur::Word& w = words[static_cast<size_t>(i % word_count)];
      const uint32_t level = static_cast<uint32_t>(random.engine()() % levels);
      const uint32_t seed = static_cast<uint32_t>(random.engine()() % blur::kPrefixHashSeeds);
      const blur::Word prefix = w.prefix(blur::PrefixExtension::prefix_length(level));
      const uint32_t bucket = blur::prefix_hash(blur::prefix_hash_key(level, seed), prefix, bits);
      fill.add(static_cast<uint64_t>(i / 64) + 1, pem_report(metric, level << 16 | seed, bucket),
               minute);
    }
  } else {
    // 4 uniformly random reports per device and hour over 720 hours.
    const int64_t devices = std::max<int64_t>(1, reports / 2880);
    for (int64_t d = 0; d < devices; ++d) {
      for (int64_t hour = 0; hour < 720; ++hour) {
        for (int r = 0; r < 4; ++r) {
          fill.add(static_cast<uint64_t>(d * 720 + hour) + 1,
                   blur_test::random_report(metric, random.engine()),
                   static_cast<uint32_t>((kNow - (hour + 1) * 3600) / 60));
        }
      }
    }
  }
  fill.flush();
  if (!fill.ok) slot->store.reset();
  return slot->store.get();
}

// range(0): population, range(1): reports, range(2): 0 estimate, 1 daily
// series, 2 hourly series; range(3): 1 to answer from the discovery cache
// (a read repeated with no new report), 0 to discover every time.
void BM_PemEstimate(benchmark::State& state) {
  const auto population = static_cast<Population>(state.range(0));
  Store* store = filled_store(population, state.range(1));
  if (store == nullptr) return state.SkipWithError("fill");
  const MetricConfig metric = pem_metric();
  // The hash's tables are built once per process (shared_word_table), not per read.
  (void)PrefixSupport(metric);
  const int64_t kind = state.range(2);
  const bool cached = state.range(3) != 0;
  auto read = [kind](const CollectorApi& api) {
    return kind == 0   ? api.estimate("11", {})
           : kind == 1 ? api.series("11", {{"bucket", "day"}})
                       : api.series("11", {{"bucket", "hour"}});
  };
  CollectorApi warm(*store, nullptr);
  if (cached) (void)read(warm);
  for (auto _ : state) {
    const CollectorApi cold(*store, nullptr);
    const ApiResponse answer = read(cached ? warm : cold);
    if (answer.status != 200) return state.SkipWithError(answer.body.c_str());
    benchmark::DoNotOptimize(answer);
  }
  static const char* const kNames[] = {"honest", "adversarial", "sparse"};
  static const char* const kKinds[] = {"estimate", "daily series", "hourly series"};
  state.SetLabel(std::string(kNames[population]) + " " + kKinds[kind] +
                 (cached ? " (cached)" : ""));
  state.counters["reports"] = static_cast<double>(state.range(1));
}
BENCHMARK(BM_PemEstimate)
    ->Args({kSparse, 2880, 0, 0})
    ->Args({kSparse, 28800, 0, 0})
    ->Args({kSparse, 28800, 1, 0})
    ->Args({kSparse, 28800, 2, 0})
    ->Args({kSparse, 28800, 2, 1})
    ->Args({kHonest, 1000000, 0, 0})
    ->Args({kHonest, 1000000, 0, 1})
    ->Args({kAdversarial, 1000000, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()  // CPU: every thread's
    ->UseRealTime();

// Where an estimate's time goes, phase by phase (range(2)): 0 reading and
// merging the stored aggregate rows, 1 its fingerprint (the cache's key),
// 2 the word discovery itself.
void BM_PemPhase(benchmark::State& state) {
  const auto population = static_cast<Population>(state.range(0));
  Store* store = filled_store(population, state.range(1));
  if (store == nullptr) return state.SkipWithError("fill");
  const MetricConfig metric = pem_metric();
  (void)PrefixSupport(metric);
  auto aggregate = store->aggregate(metric, TimeRange{});
  if (!aggregate) return state.SkipWithError("read");
  const int64_t phase = state.range(2);
  for (auto _ : state) {
    if (phase == 0) {
      auto read = store->aggregate(metric, TimeRange{});
      benchmark::DoNotOptimize(read);
    } else if (phase == 1) {
      benchmark::DoNotOptimize(aggregate->fingerprint());
    } else {
      const Discovery found = discover_words(aggregate.value(), DiscoveryOptions{});
      benchmark::DoNotOptimize(found);
      state.counters["words"] = static_cast<double>(found.words.size());
      state.counters["candidates"] = static_cast<double>(found.candidates_evaluated);
    }
  }
  static const char* const kNames[] = {"honest", "adversarial", "sparse"};
  static const char* const kPhases[] = {"store read", "fingerprint", "discovery"};
  state.SetLabel(std::string(kNames[population]) + " " + kPhases[phase]);
}
BENCHMARK(BM_PemPhase)
    ->Args({kHonest, 1000000, 0})
    ->Args({kHonest, 1000000, 1})
    ->Args({kHonest, 1000000, 2})
    ->Args({kAdversarial, 1000000, 0})
    ->Args({kAdversarial, 1000000, 2})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()  // CPU: every thread's
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
