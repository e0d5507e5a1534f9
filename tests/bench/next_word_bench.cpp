// The device next-word predictor on the host build: one token fed through
// the int8 LSTM, and the top-3 over the vocabulary, at the reference
// configuration of ../shared/reference/BENCHMARKS.md (V 5000, embedding 64,
// hidden 128) and a larger one (V 10000, 96, 192). Weights are random: the
// work does not depend on their values.
#include <benchmark/benchmark.h>

#include <vector>

#include "blur/model/next_word_model.h"
#include "blur/model/next_word_predictor.h"
#include "trainer/export/device_model_export.h"

namespace {

struct Fixture {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> scratch;
  blur::NextWordPredictor predictor;
  Fixture(uint32_t vocab, uint32_t embedding, uint32_t hidden) {
    blur::trainer::FloatLstmWeights w;
    w.vocab = vocab;
    w.embedding = embedding;
    w.hidden = hidden;
    w.special_tokens = 4;
    uint64_t state = 1;
    auto fill = [&](std::vector<float>& v, size_t n) {
      v.resize(n);
      for (float& x : v) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<float>(static_cast<double>(state >> 40) / 16777216.0 - 0.5);
      }
    };
    fill(w.embedding_table, size_t{vocab} * embedding);
    fill(w.input_weights, 4 * size_t{hidden} * embedding);
    fill(w.recurrent_weights, 4 * size_t{hidden} * hidden);
    fill(w.gate_bias, 4 * size_t{hidden});
    fill(w.output_weights, size_t{vocab} * hidden);
    fill(w.output_bias, vocab);
    std::string error;
    bytes = blur::trainer::export_device_model(w, &error);
    model = new blur::NextWordModel(blur::NextWordModel::open(bytes.data(), bytes.size()).value());
    scratch.resize(blur::NextWordPredictor::scratch_size(*model) / 4 + 1);
    (void)predictor.init(*model, reinterpret_cast<uint8_t*>(scratch.data()), scratch.size() * 4);
  }
  ~Fixture() { delete model; }
  blur::NextWordModel* model;
};

void BM_NextWordFeed(benchmark::State& state) {
  Fixture f(static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1)),
            static_cast<uint32_t>(state.range(2)));
  uint32_t token = 5;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f.predictor.feed(token));
    token = (token * 31 + 7) % static_cast<uint32_t>(state.range(0));
  }
  state.counters["model_bytes"] = static_cast<double>(f.bytes.size());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NextWordFeed)->Args({5000, 64, 128})->Args({10000, 96, 192});

void BM_NextWordTop3(benchmark::State& state) {
  Fixture f(static_cast<uint32_t>(state.range(0)), static_cast<uint32_t>(state.range(1)),
            static_cast<uint32_t>(state.range(2)));
  (void)f.predictor.feed(5);
  uint32_t ids[3];
  int32_t scores[3];
  for (auto _ : state) benchmark::DoNotOptimize(f.predictor.top_k(3, ids, scores));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NextWordTop3)->Args({5000, 64, 128})->Args({10000, 96, 192});

}  // namespace

BENCHMARK_MAIN();
