// DP-SGD audited in one training run (Steinke, Nasr, Jagielski, NeurIPS
// 2023, arXiv 2305.08846): m canaries, random token sequences, each put
// into the training set by an independent fair coin; the real DP-SGD
// trainer (dp_sgd.h: Poisson sampling, clipping, discrete Gaussian noise)
// trains on them and on background text (a counting language, always in);
// each canary is scored by how much training lowered its loss (its loss
// under the trained model minus under the initial one, the reference);
// the auditor guesses "included" for the guesses/2 lowest scores,
// "excluded" for the guesses/2 highest, abstains on the rest, and the
// number of right guesses gives an epsilon lower bound
// (epsilon_lower_bound.h). A correct (epsilon, delta)-DP trainer gives a
// bound above its epsilon with probability <= 1 - confidence.
#ifndef BLUR_TRAINER_AUDIT_ONE_RUN_AUDIT_H
#define BLUR_TRAINER_AUDIT_ONE_RUN_AUDIT_H

#include <cstdint>
#include <limits>

#include "trainer/model/language_model.h"

namespace blur::trainer {

struct OneRunAuditConfig {
  uint32_t canaries = 1000;   // m
  uint32_t canary_tokens = 8;
  uint32_t background = 500;  // units of the counting language
  uint32_t guesses = 200;     // half "included", half "excluded"
  LanguageModelConfig model{64, 16, 64};
  double epsilon = 4;  // DP-SGD's target (RDP accountant); +inf: not private
  double delta = 1e-5;
  double sampling_rate = 0.1;
  double epochs = 20;
  double clip_norm = 1.0;
  double learning_rate = 1.0;
  double momentum = 0.9;
  double confidence = 0.95;
  uint64_t seed = 1;  // canaries, coins, initialization and noise
};

struct OneRunAuditResult {
  uint64_t canaries = 0, included = 0, guesses = 0, correct = 0, steps = 0;
  double noise_multiplier = 0;
  double accountant_epsilon = std::numeric_limits<double>::infinity();  // RDP, at delta
  double epsilon_lower = 0;
};

// Throws std::invalid_argument for an unusable config.
OneRunAuditResult run_one_run_audit(const OneRunAuditConfig& config);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_AUDIT_ONE_RUN_AUDIT_H
