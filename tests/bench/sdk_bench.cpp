// Device-side costs on the host build: DRBG draws, exact sampling, the
// durable ledger charge, encoding, and a whole simulated device's life.
#include <benchmark/benchmark.h>
#include <string.h>

#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/mechanisms/discrete_laplace.h"
#include "blur/mechanisms/generalized_randomized_response.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/storage/ledger.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/mechanisms/loloha.h"
#include "blur/mechanisms/one_bit_mean.h"
#include "blur/mechanisms/rappor.h"
#include "blur/report/report.h"
#include "blur/report/report_encoding.h"
#include "blur/sampling/rng.h"
#include "blur/mechanisms/unary_encoding.h"
#include "device_reports.h"
#include "sim_port.h"

namespace {

void BM_RngUniform(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  uint64_t x = 0;
  for (auto _ : state) {
    if (rng.uniform(1000, &x) != blur::Status::kOk) return state.SkipWithError("uniform");
    benchmark::DoNotOptimize(x);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RngUniform);

// DRBG output rate: the cost floor of the unary encodings' bit-sliced coins.
void BM_RngFill(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  uint8_t buffer[4096];
  const size_t length = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    if (rng.fill(buffer, length) != blur::Status::kOk) return state.SkipWithError("fill");
    benchmark::DoNotOptimize(buffer);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(length));
}
BENCHMARK(BM_RngFill)->Arg(64)->Arg(4096);

void BM_BinaryRandomizedResponse(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto rr = blur::BinaryRandomizedResponse::create(static_cast<uint32_t>(state.range(0)));
  uint32_t out = 0;
  uint32_t truth = 0;
  for (auto _ : state) {
    if (rr.value().randomize(rng, truth, &out) != blur::Status::kOk)
      return state.SkipWithError("rr");
    truth ^= 1;
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BinaryRandomizedResponse)->Arg(250000)->Arg(1000000)->Arg(4000000);

// Args: epsilon in micro-nats, domain size.
void BM_GeneralizedRandomizedResponse(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto grr = blur::GeneralizedRandomizedResponse::create(
      static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1)));
  const uint32_t domain = static_cast<uint32_t>(state.range(1));
  uint32_t out = 0;
  uint32_t truth = 0;
  for (auto _ : state) {
    if (grr.value().randomize(rng, truth, &out) != blur::Status::kOk)
      return state.SkipWithError("grr");
    truth = (truth + 1) % domain;
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GeneralizedRandomizedResponse)
    ->Args({1000000, 16})
    ->Args({4000000, 16})
    ->Args({1000000, 4096});

// Args: 0 = SUE / 1 = OUE, epsilon in micro-nats, domain size.
void BM_UnaryEncoding(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto ue = blur::UnaryEncoding::create(
      state.range(0) == 0 ? blur::UnaryEncoding::Kind::kSymmetric
                          : blur::UnaryEncoding::Kind::kOptimized,
      static_cast<uint32_t>(state.range(1)), static_cast<uint32_t>(state.range(2)));
  const uint32_t domain = static_cast<uint32_t>(state.range(2));
  static uint8_t bits[blur::kMaxBitVectorBytes];
  uint32_t truth = 0;
  for (auto _ : state) {
    if (ue.value().randomize(rng, truth, bits) != blur::Status::kOk) {
      return state.SkipWithError("ue");
    }
    truth = (truth + 1) % domain;
    benchmark::DoNotOptimize(bits);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UnaryEncoding)
    ->Args({0, 1000000, 4096})
    ->Args({1, 1000000, 4096})
    ->Args({1, 1000000, 64});

// Args: epsilon in micro-nats, domain size.
// One-time RAPPOR: cohort draw, SHA-256 Bloom positions, k dyadic bit flips.
void BM_Rappor(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const blur::RapporShape shape{static_cast<uint32_t>(state.range(1)),
                                static_cast<uint32_t>(state.range(2)), 64};
  const auto rappor = blur::Rappor::create(static_cast<uint32_t>(state.range(0)), 4096, shape,
                                           blur::BloomHashKey{1, 0});
  if (!rappor.ok()) return state.SkipWithError("create");
  uint8_t bits[blur::kMaxBitVectorBytes];
  uint32_t cohort = 0;
  uint32_t value = 0;
  for (auto _ : state) {
    if (rappor.value().randomize(rng, value, &cohort, bits) != blur::Status::kOk) {
      return state.SkipWithError("randomize");
    }
    value = (value + 1) % 4096;
    benchmark::DoNotOptimize(bits);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Rappor)->Args({1000000, 256, 1})->Args({1000000, 128, 2})->Args({4000000, 256, 1});

void BM_HadamardResponse(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto hr = blur::HadamardResponse::create(static_cast<uint32_t>(state.range(0)),
                                                 static_cast<uint32_t>(state.range(1)));
  const uint32_t domain = static_cast<uint32_t>(state.range(1));
  uint32_t out = 0, value = 0;
  for (auto _ : state) {
    if (hr.value().randomize(rng, value, &out) != blur::Status::kOk) {
      return state.SkipWithError("hr");
    }
    value = (value + 1) % domain;
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HadamardResponse)->Args({1000000, 4096})->Args({4000000, 4096});

// Args: 0 = OLH / 1 = BLH, epsilon in micro-nats, domain size.
void BM_LocalHashing(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto lh = blur::LocalHashing::create(
      state.range(0) == 0 ? blur::LocalHashing::Kind::kOptimized
                          : blur::LocalHashing::Kind::kBinary,
      static_cast<uint32_t>(state.range(1)), static_cast<uint32_t>(state.range(2)));
  const uint32_t domain = static_cast<uint32_t>(state.range(2));
  uint32_t seed = 0, bucket = 0, value = 0;
  for (auto _ : state) {
    if (lh.value().randomize(rng, value, &seed, &bucket) != blur::Status::kOk) {
      return state.SkipWithError("lh");
    }
    value = (value + 1) % domain;
    benchmark::DoNotOptimize(bucket);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LocalHashing)
    ->Args({0, 1000000, 4096})
    ->Args({0, 4000000, 4096})
    ->Args({1, 1000000, 4096});

// LOLOHA: the device's hash seed and the bucket's permanent response from
// HMAC streams of the secret, then one g-ary randomized response. Args: the
// report epsilon eta and the longitudinal epsilon in micro-nats, domain size.
void BM_Loloha(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto loloha = blur::Loloha::create(static_cast<uint32_t>(state.range(0)),
                                           static_cast<uint32_t>(state.range(1)),
                                           static_cast<uint32_t>(state.range(2)), {1, 2});
  const uint32_t domain = static_cast<uint32_t>(state.range(2));
  static const uint8_t kSecret[32] = {7, 1, 9};
  static blur::ReportPayload payload;
  uint32_t value = 0;
  for (auto _ : state) {
    if (loloha.value().randomize(rng, kSecret, value, &payload) != blur::Status::kOk) {
      return state.SkipWithError("loloha");
    }
    value = (value + 1) % domain;
    benchmark::DoNotOptimize(payload.value);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Loloha)->Args({500000, 2000000, 4096})->Args({2000000, 4000000, 4096});

// Word discovery (pem, sfp) on the benchmark's words: args epsilon in
// micro-nats, longest word. Compare with BM_GeneralizedRandomizedResponse.
template <typename Mechanism>
void BM_WordDiscovery(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto mechanism = Mechanism::create(static_cast<uint32_t>(state.range(0)),
                                           static_cast<uint32_t>(state.range(1)));
  static const char* const kWords[] = {"niebuhr's", "sunset", "rightful", "lucid", "overtaking"};
  blur::Word words[5];
  for (int i = 0; i < 5; ++i) {
    words[i] = blur::Word::parse(kWords[i], strlen(kWords[i])).value();
  }
  uint32_t seed = 0, bucket = 0, i = 0;
  for (auto _ : state) {
    if (mechanism.value().randomize(rng, words[i], &seed, &bucket) != blur::Status::kOk) {
      return state.SkipWithError("randomize");
    }
    i = (i + 1) % 5;
    benchmark::DoNotOptimize(bucket);
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_PrefixExtension(benchmark::State& state) {
  BM_WordDiscovery<blur::PrefixExtension>(state);
}
void BM_SequenceFragmentPuzzle(benchmark::State& state) {
  BM_WordDiscovery<blur::SequenceFragmentPuzzle>(state);
}
BENCHMARK(BM_PrefixExtension)->Args({4000000, 10})->Args({4000000, 16});
BENCHMARK(BM_SequenceFragmentPuzzle)->Args({4000000, 10})->Args({4000000, 16});

// Args: epsilon in micro-nats, grid size (values 0..k-1).
void BM_DiscreteLaplace(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto laplace = blur::DiscreteLaplace::create(static_cast<uint32_t>(state.range(0)),
                                                     static_cast<uint32_t>(state.range(1)));
  int64_t out = 0;
  for (auto _ : state) {
    if (laplace.value().randomize(rng, 1, &out) != blur::Status::kOk) {
      return state.SkipWithError("laplace");
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DiscreteLaplace)->Args({1000000, 101})->Args({4000000, 101})->Args({1000000, 4096});

void BM_OneBitMean(benchmark::State& state) {
  blur::sim::SimPort port(1);
  blur::Rng rng;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk) return state.SkipWithError("seed");
  const auto onebit = blur::OneBitMean::create(static_cast<uint32_t>(state.range(0)), 101);
  uint32_t out = 0, value = 0;
  for (auto _ : state) {
    if (onebit.value().randomize(rng, value, &out) != blur::Status::kOk) {
      return state.SkipWithError("onebit");
    }
    value = (value + 37) % 101;
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_OneBitMean)->Arg(1000000)->Arg(4000000);

// Charge (a log entry programmed, synced and read back on RAM flash of two
// 4 KiB blocks; an erase and a snapshot whenever the log moves on) +
// randomize. Argument: the program unit.
void BM_ReportBinaryWithDurableCharge(benchmark::State& state) {
  static uint8_t flash[2 * 4096];
  blur::flash::Config config = blur::sim::SimPort::default_flash_config(2);
  config.block_size = 4096;
  config.prog_size = static_cast<uint32_t>(state.range(0));
  blur::sim::SimPort port(1, config, flash);
  blur::Rng rng;
  blur::Ledger ledger;
  if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk ||
      ledger.provision(port.port(), blur::Partition{0, 2}, {UINT64_MAX / 2}, 1) !=
          blur::Status::kOk) {
    return state.SkipWithError("setup");
  }
  const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
  blur::Report report{};
  for (auto _ : state) {
    if (blur::make_report(ledger, rng, rr.value(), 1, true, &report) != blur::Status::kOk) {
      return state.SkipWithError("report");
    }
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReportBinaryWithDurableCharge)->Arg(1)->Arg(8);

void BM_EncodeBatch(benchmark::State& state) {
  const size_t count = static_cast<size_t>(state.range(0));
  blur::Report reports[blur::kMaxReportsPerBatch];
  for (size_t i = 0; i < count; ++i) {
    reports[i] = blur_test::scalar_report(1000 + i, 7, blur::MechanismId::kBinaryRandomizedResponse,
                                          1000000, 2, i % 3 == 0);
  }
  uint8_t buffer[blur::kBatchHeaderSize +
                 blur::kMaxReportsPerBatch * blur::kMaxEncodedScalarReportSize];
  size_t written = 0;
  for (auto _ : state) {
    if (blur::encode_batch(42, reports, count, buffer, sizeof buffer, &written) !=
        blur::Status::kOk) {
      return state.SkipWithError("encode");
    }
    benchmark::DoNotOptimize(buffer);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
  state.counters["bytes_per_batch"] = static_cast<double>(written);
}
BENCHMARK(BM_EncodeBatch)->Arg(1)->Arg(64);

// What blur-device-sim does per device: seed the DRBG, provision the
// ledger, one report, encode.
void BM_SimulatedDeviceLife(benchmark::State& state) {
  uint64_t index = 0;
  for (auto _ : state) {
    blur::sim::SimPort port(++index);
    blur::Rng rng;
    blur::Ledger ledger;
    const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
    blur::Report report{};
    uint8_t buffer[64];
    size_t written = 0;
    if (rng.seed(port.port(), nullptr, 0) != blur::Status::kOk ||
        ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, {10 * blur::kEpsilonMicrosPerNat}, index) !=
            blur::Status::kOk ||
        blur::make_report(ledger, rng, rr.value(), 1, true, &report) != blur::Status::kOk ||
        blur::encode_batch(index, &report, 1, buffer, sizeof buffer, &written) !=
            blur::Status::kOk) {
      return state.SkipWithError("device");
    }
    benchmark::DoNotOptimize(buffer);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SimulatedDeviceLife);

}  // namespace

BENCHMARK_MAIN();
