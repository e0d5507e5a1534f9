// One DP-SGD step versus one non-private step of the collector's next-word
// model (collector/trainer), expected batch size q N = 64, in two
// configurations (the benchmark argument):
//   /0  BENCHMARKS.md's reference: vocabulary 5000, embedding 64, LSTM 128,
//       sequences of exactly 20 uniformly random tokens, sigma 1, C 1
//       (Opacus 1.4 measured here: 65.3 plain / 26.8 DP examples/s);
//   /1  a larger model: vocabulary 8000, embedding 96, LSTM 192, 16..24
//       Zipf-like tokens (mean 20), sigma 1, C 0.2 (clips nearly all).
// items_per_second = examples per second.
//
//   NonPrivateStep    sigma = 0, no clipping (no norms, no noise)
//   DpSgdStep         sigma = 1, C (above): exact per-example norms, clipping,
//                     noise drawn on every core after the backward pass
//   DpSgdStepOneThread  the same with the noise drawn on one thread
//   GemmRate          one single-threaded sgemm per worker at once: the roofline
//   GaussianNoiseVector  the noise alone: one N(0, 1) per parameter (gaussian_noise.h)
//
// Peak memory: peak_rss_MiB is the process's peak resident set (getrusage),
// so run one benchmark per process to attribute it:
//   train_bench --benchmark_filter='^NonPrivateStep/0'
//   train_bench --benchmark_filter='^DpSgdStep/0'
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <vector>

#include "trainer/dpsgd/dp_sgd.h"
#include "trainer/model/parallel.h"
#include "trainer/model/softmax_cross_entropy.h"
#include "trainer/random/discrete_gaussian.h"
#include "trainer/random/gaussian_noise.h"

namespace {

using namespace blur::trainer;

constexpr LanguageModelConfig kModels[2] = {{5000, 64, 128}, {8000, 96, 192}};
constexpr size_t kBatch = 64;
constexpr uint64_t kDataset = 6400;
// The large model's per-example gradient norms are about 0.29 at
// initialization: C = 0.2 clips (nearly) every example, as DP-SGD usually does.
constexpr double kClips[2] = {1.0, 0.2};

// Token ids with a Zipf-like skew (frequent words reappear within and
// across examples, as in real text), fixed by the seed.
std::vector<Example> make_batch(int which) {
  const LanguageModelConfig& model = kModels[which];
  DrbgStream stream(TrainSeed::from_u64(1), "bench-corpus", 0);
  std::vector<Example> batch(kBatch);
  for (size_t j = 0; j < kBatch; ++j) {
    const size_t length = which == 0 ? 20 : 16 + j % 9;
    for (size_t t = 0; t < length; ++t) {
      const double u = stream.uniform53();
      const double skewed = which == 0 ? u : u * u * u;
      batch[j].push_back(static_cast<int32_t>(static_cast<double>(model.vocab_size) * skewed));
    }
  }
  return batch;
}

double peak_rss_mib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // kB on Linux
}

void run_steps(benchmark::State& state, double sigma, bool clip, bool worker) {
  const int which = static_cast<int>(state.range(0));
  const std::vector<Example> examples = make_batch(which);
  ExampleBatch batch;
  for (const Example& e : examples) batch.push_back(&e);
  DpSgdConfig config;
  config.dataset_size = kDataset;
  config.sampling_rate = static_cast<double>(kBatch) / static_cast<double>(kDataset);
  config.noise_multiplier = sigma;
  config.clip_norm = clip ? kClips[which] : std::numeric_limits<double>::infinity();
  config.learning_rate = 0.5;
  config.momentum = 0.9;
  config.noise_threads = worker ? 0 : 1;
  DpSgdTrainer trainer(LanguageModel(kModels[which], TrainSeed::from_u64(2)), config,
                       TrainSeed::from_u64(3));
  trainer.step(batch);  // warm-up: scratch buffers reach their size
  size_t clipped = 0;
  double norm = 0;
  for (auto _ : state) {
    const DpSgdStepStats stats = trainer.step(batch);
    clipped += stats.clipped;
    norm += stats.mean_grad_norm;
  }
  state.counters["mean_grad_norm"] = norm / static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
  state.counters["clipped_fraction"] =
      static_cast<double>(clipped) / static_cast<double>(state.iterations() * kBatch);
  state.counters["params_M"] = static_cast<double>(trainer.model().parameter_count()) / 1e6;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
  // Arithmetic per example (multiply-adds x 2): forward 4H(E + H) + V H per
  // predicted token (LSTM layer, output layer), backward twice that.
  const LanguageModelConfig& m = kModels[which];
  double tokens = 0;
  for (const Example& e : examples) tokens += static_cast<double>(e.size() - 1);
  const double macs_per_token =
      4.0 * m.hidden_dim * (m.embedding_dim + m.hidden_dim) + double(m.vocab_size) * m.hidden_dim;
  const double flops_per_example = 2 * 3 * macs_per_token * tokens / kBatch;
  state.counters["MFLOP_per_example"] = flops_per_example / 1e6;
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(flops_per_example * kBatch * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
  state.SetLabel(gemm_backend() + ", softmax " + softmax_backend() + ", " +
                 std::to_string(worker_threads()) + " workers");
}

void NonPrivateStep(benchmark::State& state) { run_steps(state, 0, false, false); }
void DpSgdStep(benchmark::State& state) { run_steps(state, 1.0, true, true); }
void DpSgdStepOneThread(benchmark::State& state) { run_steps(state, 1.0, true, false); }

// The machine's GEMM roofline as the trainer sees it: one single-threaded
// sgemm per worker thread at once (the way training steps run them), in
// the shape of the output layer's largest product (V x H times H x N/2 for
// a 64-example batch of 20 tokens over 2 workers) and a large square.
void GemmRate(benchmark::State& state) {
  const Eigen::Index m = state.range(0), k = state.range(1), n = state.range(2);
  const size_t workers = worker_threads();
  std::vector<Eigen::MatrixXf> a(workers), b(workers), c(workers);
  for (size_t t = 0; t < workers; ++t) {
    a[t] = Eigen::MatrixXf::Constant(m, k, 0.5f);
    b[t] = Eigen::MatrixXf::Constant(k, n, 0.25f);
    c[t] = Eigen::MatrixXf::Zero(m, n);
  }
  for (auto _ : state) {
    parallel_items(workers, [&](size_t first, size_t last) {
      for (size_t t = first; t < last; ++t) c[t].noalias() = a[t] * b[t];
    });
    benchmark::DoNotOptimize(c[0].data());
  }
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(2.0 * double(m) * double(k) * double(n) * double(workers) *
                             static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
  state.SetLabel(gemm_backend() + ", softmax " + softmax_backend() + ", " +
                 std::to_string(workers) + " workers");
}

void GaussianNoiseVector(benchmark::State& state) {
  const LanguageModel model(kModels[state.range(0)]);
  std::vector<float> buffer(model.parameter_count(), 0.0f);
  uint64_t step = 0;
  for (auto _ : state) {
    const GaussianNoise noise(TrainSeed::from_u64(4), "noise", step++);
    noise.add(buffer.data(), buffer.size(), 1.0);
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * buffer.size()));
}

// The discrete noise alone: one N_Z(0, 2^42) per parameter
// (discrete_gaussian.h), on one thread (/1) or every core (/0, as a DP
// step draws it).
void DiscreteGaussianNoiseVector(benchmark::State& state) {
  const LanguageModel model(kModels[state.range(0)]);
  std::vector<int64_t> buffer(model.parameter_count(), 0);
  uint64_t step = 0;
  for (auto _ : state) {
    const DiscreteGaussianNoise noise(TrainSeed::from_u64(4), "noise", step++);
    noise.sample(buffer.data(), buffer.size(), 21, static_cast<unsigned>(state.range(1)));
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * buffer.size()));
}

// The steps' "CPU" column is the whole process's CPU time (all workers): on
// a loaded machine it moves far less than the wall time.
BENCHMARK(NonPrivateStep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(DpSgdStep)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(DpSgdStepOneThread)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->MeasureProcessCPUTime();
BENCHMARK(GemmRate)
    ->Args({5000, 128, 640})
    ->Args({2048, 2048, 2048})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(GaussianNoiseVector)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(DiscreteGaussianNoiseVector)
    ->Args({0, 1})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
