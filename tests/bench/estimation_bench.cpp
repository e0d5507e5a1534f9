// Estimation cost at the BENCHMARKS.md configuration: d = 4096, eps = 1,
// uniform true values, every value of the domain estimated. Reports are
// drawn from each mechanism's output distribution with std::mt19937_64
// (a fast non-private generator: this measures the collector, not the
// device); the timed part is aggregation (Aggregate) + estimation.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "api/metric_estimate.h"
#include "blur/mechanisms/bloom_hash.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/mechanisms/local_hashing.h"
#include "mechanisms/local_hashing.h"

namespace {

using namespace blur::collector;

constexpr uint32_t kDomain = 4096;

struct Reports {
  std::vector<uint32_t> values;
  std::vector<std::array<uint32_t, 3>> packed;  // local hashing: a, b, bucket
  std::vector<std::string> bits;
};

Reports generate(MechanismId mechanism, size_t n) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint32_t> value(0, kDomain - 1);
  std::uniform_real_distribution<double> unit(0, 1);
  const double e = std::exp(1.0);
  Reports r;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = value(rng);
    switch (mechanism) {
      case MechanismId::kGeneralizedRandomizedResponse:
        r.values.push_back(unit(rng) < e / (e + kDomain - 1) ? v : value(rng));
        break;
      case MechanismId::kOptimizedLocalHashing: {
        const MetricConfig metric{1, mechanism, 1000000, kDomain};
        const auto shape = local_hash_shape(metric);
        const uint32_t g = 1u << shape.bucket_bits;
        const uint32_t a = static_cast<uint32_t>(rng() % (1u << shape.field_bits));
        const uint32_t b = static_cast<uint32_t>(rng() % (1u << shape.field_bits));
        const uint32_t h = (blur::gf2_multiply(a, v, shape.field_bits) ^ b) >>
                           (shape.field_bits - shape.bucket_bits);
        const uint32_t y =
            unit(rng) < e / (e + g - 1) ? h : (h + 1 + static_cast<uint32_t>(rng() % (g - 1))) % g;
        r.values.push_back(0);
        r.packed.push_back({a, b, y});
        break;
      }
      case MechanismId::kHadamardResponse: {
        const uint32_t size = blur::hadamard_size(kDomain);
        const bool inside = unit(rng) < e / (e + 1);
        uint32_t j;
        do j = static_cast<uint32_t>(rng() % size);
        while (((__builtin_popcount((v + 1) & j) & 1) == 0) != inside);
        r.values.push_back(j);
        break;
      }
      case MechanismId::kRappor: {  // default shape: 256 bits, 1 hash, 64 cohorts
        const blur::RapporShape shape{};
        const double f = std::ldexp(
            static_cast<double>(blur::Rappor::flip_numerator(1000000, shape.hash_count)), -64);
        const uint32_t cohort = static_cast<uint32_t>(rng() % shape.cohort_count);
        const std::string text = std::to_string(v);
        uint16_t positions[blur::kMaxBloomHashes];
        if (blur::bloom_positions({1, 0}, cohort, reinterpret_cast<const uint8_t*>(text.data()),
                                  text.size(), shape.bloom_bits, shape.hash_count,
                                  positions) != blur::Status::kOk) {
          std::abort();
        }
        std::string bits(shape.bloom_bits / 8, '\0');
        for (uint32_t b = 0; b < shape.bloom_bits; ++b) {
          const bool member = std::find(positions, positions + shape.hash_count, b) !=
                              positions + shape.hash_count;
          if (member != (unit(rng) < f)) bits[b / 8] |= static_cast<char>(1 << (b % 8));
        }
        r.bits.push_back(std::move(bits));
        r.values.push_back(cohort);
        break;
      }
      default: {  // unary encodings
        std::string bits(kDomain / 8, '\0');
        const double q =
            mechanism == MechanismId::kOptimizedUnaryEncoding ? 1 / (e + 1) : 1 / (std::sqrt(e) + 1);
        const double p = mechanism == MechanismId::kOptimizedUnaryEncoding ? 0.5 : 1 - q;
        for (uint32_t b = 0; b < kDomain; ++b) {
          if (unit(rng) < (b == v ? p : q)) bits[b / 8] |= static_cast<char>(1 << (b % 8));
        }
        r.bits.push_back(std::move(bits));
        r.values.push_back(0);
      }
    }
  }
  return r;
}

void BM_AggregateAndEstimate(benchmark::State& state) {
  const auto mechanism = static_cast<MechanismId>(state.range(0));
  const size_t n = static_cast<size_t>(state.range(1));
  const MetricConfig metric{1, mechanism, 1000000, kDomain};
  // Unary reports are costly to draw: 50,000 distinct ones are cycled
  // (the others are all drawn).
  const bool unary = blur::mechanism_payload(mechanism) == blur::PayloadKind::kBits ||
                     blur::mechanism_payload(mechanism) == blur::PayloadKind::kBloom;
  const size_t distinct = unary ? std::min<size_t>(n, 50000) : n;
  const Reports reports = generate(mechanism, distinct);
  std::vector<IncomingReport> incoming(distinct);
  for (size_t k = 0; k < distinct; ++k) {
    IncomingReport& r = incoming[k];
    r.has_payload = true;
    r.payload = blur::mechanism_payload(mechanism);
    r.value = reports.values[k];
    if (!reports.packed.empty()) {
      r.hash_a = reports.packed[k][0];
      r.hash_b = reports.packed[k][1];
      r.value = reports.packed[k][2];
    }
    if (!reports.bits.empty()) r.bits = reports.bits[k];
  }
  for (auto _ : state) {
    Aggregate aggregate(metric);
    for (size_t i = 0; i < n; ++i) aggregate.add(incoming[i % distinct]);
    benchmark::DoNotOptimize(
        estimate_json(aggregate, DeviceClustering::one_report_per_device(aggregate.reports())));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.SetLabel(blur::mechanism_name(mechanism));
}
BENCHMARK(BM_AggregateAndEstimate)
    ->Args({2, 1000000})
    ->Args({7, 1000000})
    ->Args({8, 1000000})
    ->Args({4, 1000000})
    ->Args({3, 1000000})
    ->Args({10, 1000000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
