// DP-SGD for the next-word model (docs/math.md §6.1).
//
// Step k (k = 0, 1, ...):
//   1. Poisson sample: every one of the N examples joins independently with
//      probability q (poisson_sample, DrbgStream "sample", index k).
//   2. For each sampled example j: its exact gradient g_j over all
//      parameters jointly (language_model.h), clipped to
//      g_j * min(1, C' / ||g_j||) (C' slightly below C, noise_grid.h); an
//      example whose norm is NaN or infinite contributes zero; summed.
//   3. Rounded to the grid s = sigma C / 2^j (noise_grid.h) and, in grid
//      units, plus exact discrete Gaussian noise N_Z(0, 4^j) per
//      coordinate (DiscreteGaussianNoise "noise", index k: draw i for
//      parameter i of the flat parameter order). The result is an integer
//      vector (released_units()); everything after it is post-processing.
//   4. Times s, divided by the EXPECTED batch size B (config
//      expected_batch: the trainer's public or DP estimate of q N; never
//      the realized batch size), giving the update direction u.
//   5. Heavy-ball momentum, v <- mu v + u, theta <- theta - lr v (mu = 0 is
//      plain SGD). Momentum only post-processes the privatized u, so it
//      costs no privacy.
// Privacy accounting (q, sigma, steps -> epsilon) lives elsewhere.
//
// Floating point: norms are exact math evaluated in double over float
// gradients, and a clipped gradient's realized norm is C' up to float
// rounding (relative ~1e-6). The noise is integers drawn with integer
// arithmetic only, added to integers (no float noise, so no low-bit leak,
// Mironov 2012); the float sum it is added to is the one approximate step
// (its rounding error, relative ~1e-7 per term, is not in the sensitivity).
//
// sigma = 0 and C = +infinity is ordinary minibatch SGD through the same
// code (no norms computed, no noise drawn). Every random draw is a function
// of (seed, step index), and the checkpoint holds everything else a step
// reads (parameters, velocity, step index, seed, config), so a run restored
// from a checkpoint continues bit-identically on the same binary, CPU and
// worker count (model/parallel.h: OpenBLAS picks its kernels for the CPU
// at run time, so another machine may round differently; the noise and
// samples are identical everywhere).
#ifndef BLUR_TRAINER_DPSGD_DP_SGD_H
#define BLUR_TRAINER_DPSGD_DP_SGD_H

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "trainer/model/language_model.h"
#include "trainer/random/drbg_stream.h"
#include "trainer/dpsgd/noise_grid.h"

namespace blur::trainer {

struct DpSgdConfig {
  double sampling_rate = 0.01;                                 // q in (0, 1]
  uint64_t dataset_size = 0;                                   // N > 0; expected batch size q N
  double noise_multiplier = 0;                                 // sigma >= 0
  double clip_norm = std::numeric_limits<double>::infinity();  // C > 0; finite if sigma > 0
  double learning_rate = 0.1;
  double momentum = 0;  // mu in [0, 1)
  // B, the update's divisor: the trainer's public or DP estimate of q N
  // (trainer.h). 0: q N (tests, benchmarks).
  double expected_batch = 0;
  // 1: the noise and the update on the calling thread; otherwise on the
  // worker threads (model/parallel.h). Does not change any result.
  uint32_t noise_threads = 0;
  // The parameter groups trained (ParameterGroup bits, non-empty): the
  // norms and clipping cover them only, the noise is drawn and the update
  // made on their coordinates only, and the others keep their values (a
  // public model's, when fine-tuning). The guarantee is the same: the
  // released vector (their coordinates) has sensitivity C. Not in the
  // checkpoint: set it again after load_checkpoint (the trainer's run plan
  // holds it).
  uint32_t trained_groups = kAllGroups;

  double expected_batch_size() const {
    return expected_batch > 0 ? expected_batch : sampling_rate * static_cast<double>(dataset_size);
  }
};

// Trained groups by name: "embedding", "lstm", "output", comma-separated
// ("lstm,output"; "all" is every group). Throws std::invalid_argument for
// an unknown or empty list.
uint32_t parse_trained_groups(const std::string& names);
std::string trained_group_names(uint32_t groups);  // "all" or e.g. "lstm,output"

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
  const TrainSeed& seed() const { return seed_; }
  // For a schedule; the next steps use it (the checkpoint keeps the last).
  void set_learning_rate(double learning_rate);
  // Throws std::invalid_argument unless a non-empty subset of kAllGroups.
  void set_trained_groups(uint32_t groups);
  const DpSgdConfig& config() const { return config_; }
  const LanguageModel& model() const { return model_; }
  LanguageModel& model() { return model_; }
  const std::vector<float>& velocity() const { return velocity_; }
  // With noise: the grid, and (once keep_released_units(true)) the last
  // step's released integer vector round(S / s) + Z in grid units (tests;
  // otherwise it is never stored).
  const NoiseGrid& grid() const { return grid_; }
  void keep_released_units(bool keep) { keep_released_ = keep; }
  const std::vector<int64_t>& released_units() const { return units_; }

  // Checkpoint: model config, trainer config, seed, step index, parameters,
  // velocity, the caller's `plan` (the trainer's run plan: its privacy
  // parameters, trainer.cpp), SHA-256 of all of it. Little-endian, written
  // to path + ".tmp" and renamed. The file holds the secret seed: keep it
  // private. Throws std::runtime_error on I/O errors or a corrupt file.
  void save_checkpoint(const std::string& path, const std::string& plan = "") const;
  static DpSgdTrainer load_checkpoint(const std::string& path, std::string* plan = nullptr);

 private:
  LanguageModel model_;
  DpSgdConfig config_;
  TrainSeed seed_;
  uint64_t step_ = 0;
  std::vector<float> velocity_;
  std::vector<float> gradient_;
  NoiseGrid grid_;
  size_t lstm_begin_ = 0, output_begin_ = 0;  // the groups' boundaries in the flat order
  bool keep_released_ = false;
  std::vector<int64_t> units_;
};

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DPSGD_DP_SGD_H
