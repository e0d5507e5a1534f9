// DP-SGD for the next-word model (docs/math.md §6.1).
//
// Step k (k = 0, 1, ...):
//   1. Poisson sample: every one of the N examples joins independently with
//      probability q (poisson_sample, DrbgStream "sample", index k).
//   2. For each sampled example j: its exact gradient g_j over all
//      parameters jointly (language_model.h), clipped to
//      g_j * min(1, C / ||g_j||); summed.
//   3. Plus N(0, sigma^2 C^2 I) (GaussianNoise "noise", index k: normal i
//      for parameter i of the flat parameter order).
//   4. Divided by the EXPECTED batch size q N (not the realized one, which
//      would leak the batch size), giving the update direction u.
//   5. Heavy-ball momentum, v <- mu v + u, theta <- theta - lr v (mu = 0 is
//      plain SGD). Momentum only post-processes the privatized u, so it
//      costs no privacy.
// Privacy accounting (q, sigma, steps -> epsilon) lives elsewhere.
//
// Floating point: norms are exact math evaluated in double over float
// gradients, and a clipped gradient's realized norm is C up to float
// rounding (relative ~1e-6). The noise is double-precision Gaussian rounded
// to float and added in float; like every floating-point Gaussian
// mechanism it is not a perfect sample of the ideal one (cf. Mironov 2012
// for Laplace; discrete or snapped Gaussians avoid this, not done here).
//
// sigma = 0 and C = +infinity is ordinary minibatch SGD through the same
// code (no norms computed, no noise drawn). Every random draw is a function
// of (seed, step index), and the checkpoint holds everything else a step
// reads (parameters, velocity, step index, seed, config), so a run restored
// from a checkpoint continues bit-identically on the same binary, CPU and
// worker count (model/parallel.h: OpenBLAS picks its kernels for the CPU
// at run time, so another machine may round differently; the noise and
// samples are identical everywhere).
#ifndef BLUR_COLLECTOR_TRAINER_DPSGD_DP_SGD_H
#define BLUR_COLLECTOR_TRAINER_DPSGD_DP_SGD_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "trainer/model/language_model.h"
#include "trainer/random/drbg_stream.h"
#include "trainer/random/gaussian_noise.h"

namespace blur::collector {

struct DpSgdConfig {
  double sampling_rate = 0.01;                                 // q in (0, 1]
  uint64_t dataset_size = 0;                                   // N > 0; expected batch size q N
  double noise_multiplier = 0;                                 // sigma >= 0
  double clip_norm = std::numeric_limits<double>::infinity();  // C > 0; finite if sigma > 0
  double learning_rate = 0.1;
  double momentum = 0;  // mu in [0, 1)
  // Threads that draw the step's noise (0: one per core). Does not change
  // any result.
  uint32_t noise_threads = 0;

  double expected_batch_size() const { return sampling_rate * static_cast<double>(dataset_size); }
};

// Throws std::invalid_argument unless the config is usable (ranges above;
// sigma > 0 requires a finite C, since the noise is calibrated to C).
void validate(const DpSgdConfig& config);

// Indices (increasing) of the examples in step `step`'s Poisson sample.
std::vector<uint64_t> poisson_sample(const TrainSeed& seed, uint64_t step, uint64_t dataset_size,
                                     double sampling_rate);

struct DpSgdStepStats {
  uint64_t step = 0;          // index of the step taken
  size_t batch_size = 0;      // realized
  double mean_loss = 0;       // over the batch's examples, before the update
  size_t clipped = 0;         // examples whose gradient was scaled down
  double mean_grad_norm = 0;  // unclipped, over the batch (0 without clipping)
};

class DpSgdTrainer {
 public:
  // Throws std::invalid_argument for an invalid config.
  DpSgdTrainer(LanguageModel model, const DpSgdConfig& config, const TrainSeed& seed);

  // This step's Poisson sample over config().dataset_size examples.
  std::vector<uint64_t> sample() const;

  // One step on the examples of this step's Poisson sample (as drawn by
  // sample(), or by the caller from the same distribution), then the step
  // index advances.
  DpSgdStepStats step(const ExampleBatch& batch);
  // Samples from `dataset` (size must equal config().dataset_size) and steps.
  DpSgdStepStats step(const std::vector<Example>& dataset);

  uint64_t step_index() const { return step_; }
  // For a schedule; the next steps use it (the checkpoint keeps the last).
  void set_learning_rate(double learning_rate);
  const DpSgdConfig& config() const { return config_; }
  const LanguageModel& model() const { return model_; }
  LanguageModel& model() { return model_; }
  const std::vector<float>& velocity() const { return velocity_; }

  // Checkpoint: model config, trainer config, seed, step index, parameters,
  // velocity, SHA-256 of all of it. Little-endian, written to path + ".tmp"
  // and renamed. The file holds the secret seed: keep it private.
  // Throws std::runtime_error on I/O errors or a corrupt file.
  void save_checkpoint(const std::string& path) const;
  static DpSgdTrainer load_checkpoint(const std::string& path);

 private:
  LanguageModel model_;
  DpSgdConfig config_;
  TrainSeed seed_;
  uint64_t step_ = 0;
  std::vector<float> velocity_;
  std::vector<float> gradient_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_TRAINER_DPSGD_DP_SGD_H
