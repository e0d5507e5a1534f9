#include "trainer/dpsgd/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "trainer/accountants/pld_accountant.h"
#include "trainer/accountants/rdp_accountant.h"
#include "trainer/data/evaluation.h"
#include "trainer/dpsgd/dp_sgd.h"
#include "trainer/model/parallel.h"
#include "trainer/model/softmax_cross_entropy.h"
#include "trainer/random/drbg_stream.h"

namespace blur::collector {

namespace {

Corpus read_training_corpus(const std::string& corpus, CorpusFormat format) {
  if (corpus == "fortunes") return read_default_corpus();
  return read_corpus(corpus, format);
}

Example truncated(std::vector<int32_t> tokens, size_t max_tokens) {
  if (tokens.size() > max_tokens) tokens.resize(max_tokens);
  return tokens;
}

std::vector<Example> encode_units(const std::vector<Unit>& units, const Vocabulary& vocabulary,
                                  size_t max_tokens) {
  std::vector<Example> examples;
  examples.reserve(units.size());
  for (const Unit& unit : units) {
    Example e = truncated(vocabulary.encode(unit), max_tokens);
    if (e.size() >= 2) examples.push_back(std::move(e));
  }
  return examples;
}

// The run's phases: the vocabulary's Gaussian mechanism (if any) and DP-SGD.
RdpAccountant accountant_for(bool dp_vocabulary, double vocab_sigma, double q, double sigma,
                             uint64_t steps) {
  RdpAccountant accountant;
  if (dp_vocabulary) accountant.add(1.0, vocab_sigma, 1);
  if (steps > 0) accountant.add(q, sigma, steps);
  return accountant;
}

std::string format_progress(uint64_t step, uint64_t steps, const DpSgdStepStats& s, double epsilon,
                            double seconds, double examples_per_second) {
  char line[256];
  std::snprintf(line, sizeof line,
                "step %llu/%llu  loss %.3f  batch %zu  clipped %zu  epsilon %.3f  %.0f s  %.0f "
                "examples/s",
                static_cast<unsigned long long>(step), static_cast<unsigned long long>(steps),
                s.mean_loss, s.batch_size, s.clipped, epsilon, seconds, examples_per_second);
  return line;
}

}  // namespace

EncodedSplits encode_corpus(const std::string& corpus, CorpusFormat format,
                            const Vocabulary& vocabulary, size_t max_tokens) {
  const SplitCorpus split = split_corpus(read_training_corpus(corpus, format));
  return EncodedSplits{encode_units(split.train, vocabulary, max_tokens),
                       encode_units(split.validation, vocabulary, max_tokens),
                       encode_units(split.test, vocabulary, max_tokens)};
}

TrainReport train_language_model(const TrainOptions& o,
                                 const std::function<void(const std::string&)>& progress) {
  const bool is_private = std::isfinite(o.epsilon) || o.noise_multiplier.has_value();
  if (o.noise_multiplier && *o.noise_multiplier < 0) {
    throw std::invalid_argument("--noise-multiplier must be >= 0");
  }
  if (!(o.epsilon > 0)) throw std::invalid_argument("--epsilon must be > 0 (or inf)");
  if (!(o.delta > 0 && o.delta < 1)) throw std::invalid_argument("--delta must be in (0, 1)");
  if (!(o.epochs > 0) || !(o.expected_batch >= 1) || !(o.clip_norm > 0) || !(o.learning_rate > 0) ||
      !(o.momentum >= 0 && o.momentum < 1) || o.max_tokens < 2) {
    throw std::invalid_argument(
        "need epochs > 0, batch >= 1, clip > 0, learning rate > 0, 0 <= momentum < 1, "
        "max tokens >= 2");
  }
  if (!o.init_model.empty() &&
      (o.resume || !o.vocabulary_file.empty() || !o.vocabulary_words.empty())) {
    throw std::invalid_argument(
        "--init-from brings its own vocabulary and parameters: it excludes --resume, "
        "--vocabulary and --vocabulary-from-metric");
  }
  set_worker_threads(o.threads);
  const auto started = std::chrono::steady_clock::now();
  const TrainSeed seed = o.seed ? TrainSeed::from_u64(*o.seed) : TrainSeed::from_os_entropy();

  // 1. Corpus and split.
  progress("reading corpus " + o.corpus);
  const SplitCorpus split = split_corpus(read_training_corpus(o.corpus, o.format));
  std::vector<Unit> train_units = split.train;
  for (uint32_t i = 0; i < o.canary_repeats; ++i) {
    train_units.push_back(Unit{"canary-" + std::to_string(i), {o.canary}});
  }

  // 2. Vocabulary: a file, the DP count, or (not private) the true top words.
  const bool dp_vocabulary = is_private && o.vocabulary_file.empty() &&
                             o.vocabulary_words.empty() && o.init_model.empty();
  std::string vocabulary_path = o.checkpoint.empty() ? "" : o.checkpoint + ".vocab";
  std::optional<Vocabulary> vocabulary;
  nlohmann::json vocab_json;
  std::optional<TrainedModel> pretrained;
  if (!o.init_model.empty()) {
    progress("starting from the public model " + o.init_model);
    pretrained = load_model(o.init_model);
    vocabulary = pretrained->vocabulary;
    vocab_json["source"] = "the public model " + o.init_model;
    vocab_json["central_epsilon"] = 0;  // made from public text
    if (!vocabulary_path.empty()) vocabulary->save(vocabulary_path);
  } else if (o.resume) {
    if (o.checkpoint.empty()) throw std::invalid_argument("--resume needs --checkpoint");
    vocabulary = Vocabulary::load(vocabulary_path);
    vocab_json["source"] = "checkpoint";
  } else if (!o.vocabulary_file.empty()) {
    vocabulary = Vocabulary::load(o.vocabulary_file);
    vocab_json["source"] = o.vocabulary_file;
  } else if (!o.vocabulary_words.empty()) {
    vocabulary = Vocabulary::from_words(o.vocabulary_words);
    vocab_json["source"] = o.vocabulary_words_source;
    // Local DP, paid by each device when it reported: nothing central.
    vocab_json["central_epsilon"] = 0;
    if (!vocabulary_path.empty()) vocabulary->save(vocabulary_path);
  } else {
    const PublicWordList public_words = PublicWordList::load();
    DpVocabularyConfig config;
    config.max_size = o.vocab_size;
    config.max_words_per_unit = o.vocab_words_per_unit;
    config.noise_multiplier = o.vocab_noise_multiplier;
    // The public list keeps private words out; DP bounds what the counts
    // reveal, so the largest noisy counts are kept without a threshold.
    config.threshold_stddevs = -1e300;
    if (dp_vocabulary) {
      // The run's one seed feeds every draw: here its "vocabulary" stream,
      // then DP-SGD's "init", "sample" and "noise" streams (drbg_stream.h).
      const GaussianNoise noise(seed, "vocabulary", 0);
      DpVocabulary dp = build_dp_vocabulary(train_units, public_words, config, noise);
      vocabulary = std::move(dp.vocabulary);
      vocab_json["source"] = "dp";
      vocab_json["noise_multiplier"] = o.vocab_noise_multiplier;
      vocab_json["words_per_unit"] = o.vocab_words_per_unit;
    } else {
      std::vector<uint64_t> counts =
          bounded_counts(train_units, public_words, std::numeric_limits<size_t>::max());
      std::vector<double> scores(counts.begin(), counts.end());
      vocabulary = top_words(public_words, scores, o.vocab_size, 1.0);
      vocab_json["source"] = "true counts (not private)";
    }
    if (!vocabulary_path.empty()) vocabulary->save(vocabulary_path);
  }
  vocab_json["size"] = vocabulary->size();
  progress("vocabulary: " + std::to_string(vocabulary->size()) + " tokens (" +
           vocab_json["source"].get<std::string>() + ")");

  // 3. Examples.
  const std::vector<Example> train = encode_units(train_units, *vocabulary, o.max_tokens);
  const std::vector<Example> validation = encode_units(split.validation, *vocabulary, o.max_tokens);
  if (train.size() < 2) throw std::runtime_error("the corpus has fewer than 2 training units");
  const uint64_t n = train.size();
  const double q = std::min(1.0, o.expected_batch / static_cast<double>(n));
  const uint64_t steps = static_cast<uint64_t>(std::ceil(o.epochs / q));

  // 4. Noise multiplier: given, calibrated to the target, or none.
  double sigma = 0;
  if (o.noise_multiplier) {
    sigma = *o.noise_multiplier;
  } else if (is_private) {
    if (dp_vocabulary) {
      const double vocab_epsilon =
          accountant_for(true, o.vocab_noise_multiplier, q, 0, 0).epsilon(o.delta).epsilon;
      if (vocab_epsilon >= o.epsilon) {
        throw std::invalid_argument("the DP vocabulary alone spends epsilon " +
                                    std::to_string(vocab_epsilon) +
                                    " >= the target: raise --vocab-noise or --epsilon, or give "
                                    "--vocabulary FILE");
      }
    }
    sigma = calibrate_noise_multiplier(
        [&](double s) {
          return accountant_for(dp_vocabulary, o.vocab_noise_multiplier, q, s, steps)
              .epsilon(o.delta)
              .epsilon;
        },
        o.epsilon);
  }
  const bool clip = is_private;
  progress("training " + std::to_string(n) + " units, q " + std::to_string(q) + ", " +
           std::to_string(steps) + " steps, noise multiplier " + std::to_string(sigma));

  // 5. DP-SGD (or its non-private run: no clipping, no noise).
  DpSgdConfig dp;
  dp.sampling_rate = q;
  dp.dataset_size = n;
  dp.noise_multiplier = sigma;
  dp.clip_norm = clip ? o.clip_norm : std::numeric_limits<double>::infinity();
  dp.learning_rate = o.learning_rate;
  dp.momentum = o.momentum;
  LanguageModelConfig model_config;
  model_config.vocab_size = static_cast<int32_t>(vocabulary->size());
  model_config.embedding_dim = o.embedding;
  model_config.hidden_dim = o.hidden;
  if (pretrained) model_config = pretrained->model.config();
  std::unique_ptr<DpSgdTrainer> trainer;
  if (o.resume) {
    trainer = std::make_unique<DpSgdTrainer>(DpSgdTrainer::load_checkpoint(o.checkpoint));
    if (!(trainer->model().config() == model_config) || trainer->config().dataset_size != n) {
      throw std::runtime_error("the checkpoint was made with another model size or corpus");
    }
    progress("resumed at step " + std::to_string(trainer->step_index()));
  } else {
    trainer = std::make_unique<DpSgdTrainer>(
        pretrained ? pretrained->model : LanguageModel(model_config, seed), dp, seed);
  }
  const auto training_started = std::chrono::steady_clock::now();
  uint64_t examples_seen = 0;
  double recent_loss = 0;
  while (trainer->step_index() < steps) {
    if (o.schedule == TrainOptions::Schedule::kCosine) {
      trainer->set_learning_rate(o.learning_rate * 0.5 *
                                 (1 + std::cos(M_PI * static_cast<double>(trainer->step_index()) /
                                               static_cast<double>(steps))));
    }
    const DpSgdStepStats stats = trainer->step(train);
    examples_seen += stats.batch_size;
    recent_loss = stats.mean_loss;
    const uint64_t done = trainer->step_index();
    if (!o.checkpoint.empty() && (done % o.checkpoint_every == 0 || done == steps)) {
      trainer->save_checkpoint(o.checkpoint);
    }
    if (done % o.progress_every == 0 || done == steps) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - training_started)
              .count();
      const double spent =
          is_private ? accountant_for(dp_vocabulary, o.vocab_noise_multiplier, q, sigma, done)
                           .epsilon(o.delta)
                           .epsilon
                     : std::numeric_limits<double>::infinity();
      progress(format_progress(done, steps, stats, spent, seconds,
                               static_cast<double>(examples_seen) / std::max(seconds, 1e-9)));
    }
    if (o.stop_after_steps != 0 && done == o.stop_after_steps && done < steps) {
      if (!o.checkpoint.empty()) trainer->save_checkpoint(o.checkpoint);
      throw std::runtime_error("stopped after step " + std::to_string(done) +
                               " (--stop-after); continue with --resume");
    }
  }
  const double train_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - training_started).count();

  // 6. Summary: privacy, training, validation.
  nlohmann::json summary;
  summary["corpus"] = o.corpus;
  summary["units"] = {{"train", n}, {"validation", validation.size()}};
  summary["vocabulary"] = vocab_json;
  if (pretrained) {
    summary["pretrained"] = {{"model", o.init_model},
                             {"summary", nlohmann::json::parse(pretrained->summary_json, nullptr,
                                                               false)}};
  }
  summary["model"] = {{"vocab", model_config.vocab_size},
                      {"embedding", model_config.embedding_dim},
                      {"hidden", model_config.hidden_dim},
                      {"parameters", trainer->model().parameter_count()}};
  summary["training"] = {
      {"steps", steps},
      {"sample_rate", q},
      {"expected_batch", q * static_cast<double>(n)},
      {"epochs", o.epochs},
      {"noise_multiplier", sigma},
      {"clip_norm", clip ? o.clip_norm : 0.0},
      {"learning_rate", o.learning_rate},
      {"schedule", o.schedule == TrainOptions::Schedule::kCosine ? "cosine" : "constant"},
      {"threads", worker_threads()},
      {"gemm", gemm_backend()},
      {"softmax", softmax_backend()},
      {"momentum", o.momentum},
      {"final_batch_loss", recent_loss},
      {"seconds", train_seconds},
      {"examples_per_second", static_cast<double>(examples_seen) / std::max(train_seconds, 1e-9)},
      {"canary_repeats", o.canary_repeats}};
  if (is_private) {
    const auto result =
        accountant_for(dp_vocabulary, o.vocab_noise_multiplier, q, sigma, steps).epsilon(o.delta);
    // The PLD accountant over the same phases: a tighter epsilon for the
    // same noise (docs/math.md §6.7); the run was calibrated with RDP.
    PldAccountant pld;
    PldStatus added;
    if (dp_vocabulary) added = pld.add(1.0, o.vocab_noise_multiplier, 1);
    if (added && steps > 0) added = pld.add(q, sigma, steps);
    const PldValue pld_epsilon = added ? pld.epsilon(o.delta) : PldValue{0, added.code, added.error};
    summary["privacy"] = {{"epsilon", result.epsilon},
                          {"delta", o.delta},
                          {"order", result.order},
                          {"accountant", "rdp"},
                          {"epsilon_pld", pld_epsilon ? nlohmann::json(pld_epsilon.value)
                                                      : nlohmann::json(pld_epsilon.error)},
                          {"unit", "corpus unit (line, fortune or user)"},
                          {"seeded_for_reproducibility", o.seed.has_value()}};
  } else {
    summary["privacy"] = {{"epsilon", "inf"}, {"accountant", "none (non-private)"}};
  }
  TrainedModel trained{*vocabulary, trainer->model(), ""};
  const EvaluationResult valid = evaluate_model(
      validation, vocabulary->size(), Vocabulary::kSpecialCount, model_forward(trained.model));
  summary["validation"] = {
      {"top1", valid.top1}, {"top3", valid.top3}, {"perplexity", valid.perplexity}};
  summary["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  trained.summary_json = summary.dump();
  return TrainReport{std::move(trained), summary.dump(2)};
}

}  // namespace blur::collector
