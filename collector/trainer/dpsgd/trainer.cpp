#include "trainer/dpsgd/trainer.h"

#include <algorithm>
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
#include "trainer/dpsgd/dp_sums.h"
#include "trainer/dpsgd/run_plan.h"
#include "trainer/model/parallel.h"
#include "trainer/model/softmax_cross_entropy.h"
#include "trainer/model/vocabulary_growth.h"
#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

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

// The run's mechanisms other than DP-SGD's steps, each a Gaussian at q = 1
// for one step (0: absent).
struct Phases {
  double vocabulary_sigma = 0;  // the DP vocabulary
  double count_sigma = 0;       // the DP count of the training units
  double validation_sigma = 0;  // the DP validation
  double q = 0;
  uint32_t runs = 1;  // tuning runs composed
};

// Everything one run spends after `steps` DP-SGD steps at sigma (with the
// validation if `finished`), composed over `runs` runs.
RdpAccountant rdp_of(const Phases& p, double sigma, uint64_t steps, uint32_t runs, bool finished) {
  RdpAccountant accountant;
  if (p.vocabulary_sigma > 0) accountant.add(1.0, p.vocabulary_sigma, runs);
  if (p.count_sigma > 0) accountant.add(1.0, p.count_sigma, runs);
  if (steps > 0) accountant.add(p.q, sigma, steps * runs);
  if (finished && p.validation_sigma > 0) accountant.add(1.0, p.validation_sigma, runs);
  return accountant;
}

PldValue pld_of(const Phases& p, double sigma, uint64_t steps, uint32_t runs, double delta) {
  PldAccountant pld;
  PldStatus added;
  for (const double s : {p.vocabulary_sigma, p.count_sigma, p.validation_sigma}) {
    if (added && s > 0) added = pld.add(1.0, s, runs);
  }
  if (added && steps > 0) added = pld.add(p.q, sigma, steps * runs);
  return added ? pld.epsilon(delta) : PldValue{0, added.code, added.error};
}

// No loss, batch size or clipped count: those are statistics of private
// data released without noise.
std::string format_progress(uint64_t step, uint64_t steps, double epsilon, double seconds) {
  char line[160];
  std::snprintf(line, sizeof line, "step %llu/%llu  epsilon %.3f  %.0f s",
                static_cast<unsigned long long>(step), static_cast<unsigned long long>(steps),
                epsilon, seconds);
  return line;
}

// Per validation unit: (top-1 fraction, top-3 fraction, 1) over its word
// targets, or zeros without any.
std::vector<std::vector<double>> per_unit_accuracy(const std::vector<Example>& units,
                                                   size_t vocab_size,
                                                   const SequenceForward& forward) {
  std::vector<std::vector<double>> out;
  out.reserve(units.size());
  for (const Example& unit : units) {
    const EvaluationResult r =
        evaluate_model({unit}, vocab_size, Vocabulary::kSpecialCount, forward);
    if (r.word_targets == 0) {
      out.push_back({0.0, 0.0, 0.0});
    } else {
      out.push_back({r.top1, r.top3, 1.0});
    }
  }
  return out;
}

}  // namespace

EncodedSplits encode_corpus(const std::string& corpus, CorpusFormat format,
                            const Vocabulary& vocabulary, size_t max_tokens) {
  const SplitCorpus split = split_corpus(read_training_corpus(corpus, format));
  return EncodedSplits{encode_units(split.train, vocabulary, max_tokens),
                       encode_units(split.validation, vocabulary, max_tokens),
                       encode_units(split.test, vocabulary, max_tokens)};
}

TrainReport train_language_model(const TrainOptions& given,
                                 const std::function<void(const std::string&)>& progress) {
  // A resumed run takes its plan from the checkpoint (run_plan.h).
  std::unique_ptr<DpSgdTrainer> trainer;
  nlohmann::json plan;
  if (given.resume) {
    if (given.checkpoint.empty()) throw std::invalid_argument("--resume needs --checkpoint");
    if (!given.init_model.empty() || !given.vocabulary_file.empty() ||
        !given.vocabulary_words.empty()) {
      throw std::invalid_argument(
          "--resume continues the checkpoint's run with its vocabulary: it excludes "
          "--init-from, --vocabulary and --discovered-words");
    }
    std::string plan_text;
    trainer = std::make_unique<DpSgdTrainer>(
        DpSgdTrainer::load_checkpoint(given.checkpoint, &plan_text));
    plan = nlohmann::json::parse(plan_text, nullptr, false);
    if (!plan.is_object() || !plan.contains("requested") || !plan.contains("derived")) {
      throw std::runtime_error("checkpoint: no run plan");
    }
  }
  const TrainOptions o = given.resume ? resumed_options(given, plan["requested"]) : given;

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
  if (o.tuning_runs < 1 || !(o.count_noise_multiplier > 0) ||
      !(o.validation_noise_multiplier >= 0) || (o.units_estimate && !(*o.units_estimate >= 1))) {
    throw std::invalid_argument(
        "need --tuning-runs >= 1, --count-noise > 0, --validation-noise >= 0, "
        "--units-estimate >= 1");
  }
  if (!o.init_model.empty() && !o.vocabulary_file.empty()) {
    throw std::invalid_argument(
        "--init-from brings its own vocabulary and parameters: it excludes --resume and "
        "--vocabulary (--discovered-words adds the words it lacks)");
  }
  set_worker_threads(o.threads);
  const auto started = std::chrono::steady_clock::now();
  const TrainSeed seed = trainer ? trainer->seed()
                         : o.seed ? TrainSeed::from_u64(*o.seed)
                                  : TrainSeed::from_os_entropy();

  // 1. Corpus and split.
  progress("reading corpus " + o.corpus);
  const SplitCorpus split = split_corpus(read_training_corpus(o.corpus, o.format));
  std::vector<Unit> train_units = split.train;
  for (uint32_t i = 0; i < o.canary_repeats; ++i) {
    train_units.push_back(Unit{"canary-" + std::to_string(i), {o.canary}});
  }

  // 2. Vocabulary: the checkpoint's, a file, the DP count, or (not
  // private) the true top words.
  bool dp_vocabulary = is_private && o.vocabulary_file.empty() && o.vocabulary_words.empty() &&
                       o.init_model.empty();
  std::string vocabulary_path = o.checkpoint.empty() ? "" : o.checkpoint + ".vocab";
  std::optional<Vocabulary> vocabulary;
  nlohmann::json vocab_json;
  std::optional<TrainedModel> pretrained;
  if (o.resume) {
    vocabulary = Vocabulary::load(vocabulary_path);
    dp_vocabulary = plan["derived"]["dp_vocabulary"].get<bool>();
    vocab_json = plan["derived"]["vocabulary"];
  } else if (!o.init_model.empty()) {
    progress("starting from the public model " + o.init_model);
    pretrained = load_model(o.init_model);
    vocab_json["source"] = "the public model " + o.init_model;
    vocab_json["central_epsilon"] = 0;  // made from public text
    if (!o.vocabulary_words.empty()) {
      // The fleet's discovered words the public model lacks (their local
      // DP was paid on the devices): vocabulary_growth.h.
      GrownModel grown = grow_vocabulary(*pretrained, o.vocabulary_words);
      progress("vocabulary: " + std::to_string(grown.added.size()) + " of " +
               std::to_string(o.vocabulary_words.size()) + " discovered words are new to it");
      vocab_json["source"] = "the public model " + o.init_model + " + " +
                             o.vocabulary_words_source;
      vocab_json["public_size"] = pretrained->vocabulary.size();
      vocab_json["discovered"] = o.vocabulary_words.size();
      vocab_json["added"] = grown.added;
      pretrained->vocabulary = std::move(grown.trained.vocabulary);
      pretrained->model = std::move(grown.trained.model);
    }
    vocabulary = pretrained->vocabulary;
    if (!vocabulary_path.empty()) vocabulary->save(vocabulary_path);
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
      // then "unit-count", DP-SGD's "init", "sample" and "noise" streams,
      // and "validation" (drbg_stream.h).
      // Exact discrete Gaussian noise on the counts (vocabulary.h); its
      // effective noise multiplier (>= the requested one) is accounted.
      const DiscreteGaussianNoise noise(seed, "vocabulary", 0);
      DpVocabulary dp = build_dp_vocabulary(train_units, public_words, config, noise);
      vocabulary = std::move(dp.vocabulary);
      vocab_json["source"] = "dp";
      vocab_json["noise"] = "exact discrete Gaussian";
      vocab_json["noise_multiplier"] = dp.report.phase.noise_multiplier;
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

  // 3. Examples, and N^: a public estimate, the DP count, or (not private)
  // the exact N. The exact N stays in here: it only drives the sampler.
  const std::vector<Example> train = encode_units(train_units, *vocabulary, o.max_tokens);
  const std::vector<Example> validation = encode_units(split.validation, *vocabulary, o.max_tokens);
  if (train.size() < 2) throw std::runtime_error("the corpus has fewer than 2 training units");
  const uint64_t n = train.size();
  Phases phases;
  phases.runs = o.tuning_runs;
  if (dp_vocabulary) phases.vocabulary_sigma = vocab_json["noise_multiplier"].get<double>();
  if (is_private && o.validation_corpus.empty() && o.validation_noise_multiplier > 0) {
    phases.validation_sigma = dp_sums_noise_multiplier(o.validation_noise_multiplier, 3);
  }
  double units_estimate = 0;
  std::string units_source;
  if (o.resume) {
    const nlohmann::json& d = plan["derived"];
    units_estimate = d["units_estimate"].get<double>();
    units_source = d["units_source"].get<std::string>();
    phases.count_sigma = d["count_noise_multiplier"].get<double>();
  } else if (o.units_estimate) {
    units_estimate = *o.units_estimate;
    units_source = "public estimate (--units-estimate)";
  } else if (is_private) {
    const DpSums count = dp_sums(std::vector<std::vector<double>>(n, {1.0}), 1,
                                 o.count_noise_multiplier, seed, "unit-count");
    units_estimate = count.sums[0];
    phases.count_sigma = count.noise_multiplier;
    units_source = "dp count";
  } else {
    units_estimate = static_cast<double>(n);
    units_source = "exact (not private)";
  }
  // Post-processing: at least the expected batch (q <= 1).
  units_estimate = std::max({units_estimate, o.expected_batch, 1.0});
  const double q = std::min(1.0, o.expected_batch / units_estimate);
  const double expected_batch = q * units_estimate;
  const uint64_t steps = static_cast<uint64_t>(std::ceil(o.epochs / q));
  phases.q = q;

  // 4. Noise multiplier: the plan's, given, calibrated to the target, or none.
  double sigma = 0;
  if (o.resume) {
    sigma = plan["derived"]["noise_multiplier"].get<double>();
  } else if (o.noise_multiplier) {
    sigma = *o.noise_multiplier;
  } else if (is_private) {
    const double fixed_epsilon = rdp_of(phases, 0, 0, o.tuning_runs, true).epsilon(o.delta).epsilon;
    if (fixed_epsilon >= o.epsilon) {
      throw std::invalid_argument(
          "the vocabulary, unit count and validation alone spend epsilon " +
          std::to_string(fixed_epsilon) +
          " >= the target: raise --vocab-noise, --count-noise, --validation-noise or "
          "--epsilon, or give --vocabulary FILE, --units-estimate N, --validation-corpus FILE");
    }
    sigma = calibrate_noise_multiplier(
        [&](double s) { return rdp_of(phases, s, steps, o.tuning_runs, true).epsilon(o.delta).epsilon; },
        o.epsilon);
  }
  const bool clip = is_private;
  char line[256];
  std::snprintf(line, sizeof line,
                "training: about %.0f units (%s), q %.6f, %llu steps, noise multiplier %.6f",
                units_estimate, units_source.c_str(), q, static_cast<unsigned long long>(steps),
                sigma);
  progress(line);
  nlohmann::json derived = {{"units_estimate", units_estimate},
                            {"units_source", units_source},
                            {"count_noise_multiplier", phases.count_sigma},
                            {"sample_rate", q},
                            {"expected_batch", expected_batch},
                            {"steps", steps},
                            {"noise_multiplier", sigma},
                            {"dp_vocabulary", dp_vocabulary},
                            {"vocabulary", vocab_json}};
  if (o.resume && (plan["derived"]["sample_rate"] != derived["sample_rate"] ||
                   plan["derived"]["steps"] != derived["steps"])) {
    throw std::runtime_error("checkpoint: its plan does not reproduce (another corpus?)");
  }
  const std::string plan_text =
      nlohmann::json{{"requested", requested_settings(o)}, {"derived", derived}}.dump();

  // 5. DP-SGD (or its non-private run: no clipping, no noise).
  DpSgdConfig dp;
  dp.sampling_rate = q;
  dp.dataset_size = n;
  dp.expected_batch = expected_batch;
  dp.noise_multiplier = sigma;
  dp.clip_norm = clip ? o.clip_norm : std::numeric_limits<double>::infinity();
  dp.learning_rate = o.learning_rate;
  dp.momentum = o.momentum;
  dp.trained_groups = o.trained_groups;
  LanguageModelConfig model_config;
  model_config.vocab_size = static_cast<int32_t>(vocabulary->size());
  model_config.embedding_dim = o.embedding;
  model_config.hidden_dim = o.hidden;
  if (pretrained) model_config = pretrained->model.config();
  if (trainer) {
    const DpSgdConfig& c = trainer->config();
    if (!(trainer->model().config() == model_config) || c.dataset_size != n ||
        c.sampling_rate != q || c.noise_multiplier != sigma || c.expected_batch != expected_batch) {
      throw std::runtime_error("the checkpoint was made with another model size or corpus");
    }
    trainer->set_trained_groups(o.trained_groups);
    progress("resumed at step " + std::to_string(trainer->step_index()));
  } else {
    trainer = std::make_unique<DpSgdTrainer>(
        pretrained ? pretrained->model : LanguageModel(model_config, seed), dp, seed);
  }
  const auto training_started = std::chrono::steady_clock::now();
  while (trainer->step_index() < steps) {
    if (o.schedule == TrainOptions::Schedule::kCosine) {
      trainer->set_learning_rate(o.learning_rate * 0.5 *
                                 (1 + std::cos(M_PI * static_cast<double>(trainer->step_index()) /
                                               static_cast<double>(steps))));
    }
    trainer->step(train);
    const uint64_t done = trainer->step_index();
    if (!o.checkpoint.empty() && (done % o.checkpoint_every == 0 || done == steps)) {
      trainer->save_checkpoint(o.checkpoint, plan_text);
    }
    if (done % o.progress_every == 0 || done == steps) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - training_started)
              .count();
      const double spent = is_private
                               ? rdp_of(phases, sigma, done, 1, false).epsilon(o.delta).epsilon
                               : std::numeric_limits<double>::infinity();
      progress(format_progress(done, steps, spent, seconds));
    }
    if (o.stop_after_steps != 0 && done == o.stop_after_steps && done < steps) {
      if (!o.checkpoint.empty()) trainer->save_checkpoint(o.checkpoint, plan_text);
      throw std::runtime_error("stopped after step " + std::to_string(done) +
                               " (--stop-after); continue with --resume");
    }
  }

  // 6. Validation: public text, DP on the private split, or (not private)
  // exact on the split.
  TrainedModel trained{*vocabulary, trainer->model(), ""};
  const SequenceForward forward = model_forward(trained.model);
  nlohmann::json valid_json;
  if (!o.validation_corpus.empty()) {
    const Corpus public_text = read_corpus(o.validation_corpus, CorpusFormat::kAuto);
    const std::vector<Example> held_out =
        encode_units(public_text.units, *vocabulary, o.max_tokens);
    const EvaluationResult r =
        evaluate_model(held_out, vocabulary->size(), Vocabulary::kSpecialCount, forward);
    valid_json = {{"source", "public corpus " + o.validation_corpus},
                  {"top1", r.top1},
                  {"top3", r.top3},
                  {"perplexity", r.perplexity},
                  {"units", held_out.size()}};
  } else if (phases.validation_sigma > 0) {
    // Per-unit macro averages: noisy sums of each unit's top-1 and top-3
    // fractions over the noisy count of units with word targets.
    const DpSums sums =
        dp_sums(per_unit_accuracy(validation, vocabulary->size(), forward), 3,
                o.validation_noise_multiplier, seed, "validation");
    const double units = std::max(1.0, sums.sums[2]);
    valid_json = {{"source", "dp (the private validation split; per-unit averages)"},
                  {"noise_multiplier", sums.noise_multiplier},
                  // Each sum's noise (standard deviation); the averages'
                  // error is about this over "units".
                  {"noise_std_of_each_sum", sums.noise_multiplier * std::sqrt(3.0)},
                  {"top1", std::clamp(sums.sums[0] / units, 0.0, 1.0)},
                  {"top3", std::clamp(sums.sums[1] / units, 0.0, 1.0)},
                  {"units", sums.sums[2]}};
  } else if (!is_private && o.validation_noise_multiplier > 0) {
    const EvaluationResult r =
        evaluate_model(validation, vocabulary->size(), Vocabulary::kSpecialCount, forward);
    valid_json = {{"source", "the validation split (not private)"},
                  {"top1", r.top1},
                  {"top3", r.top3},
                  {"perplexity", r.perplexity}};
  } else {
    valid_json = {{"source", "none (--validation-noise 0)"}};
  }

  // 7. Summary: what was released and what it spent; nothing computed from
  // private data without noise.
  nlohmann::json summary;
  summary["corpus"] = o.corpus;
  summary["units"] = {{"estimate", units_estimate}, {"source", units_source}};
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
      {"expected_batch", expected_batch},
      {"epochs", o.epochs},
      {"noise_multiplier", sigma},
      {"clip_norm", clip ? o.clip_norm : 0.0},
      {"learning_rate", o.learning_rate},
      {"schedule", o.schedule == TrainOptions::Schedule::kCosine ? "cosine" : "constant"},
      {"threads", worker_threads()},
      {"gemm", gemm_backend()},
      {"softmax", softmax_backend()},
      {"momentum", o.momentum},
      {"trained", trained_group_names(o.trained_groups)},
      {"canary_repeats", o.canary_repeats}};
  if (sigma > 0) {
    summary["training"]["noise"] = {
        {"kind", "exact discrete Gaussian on a fixed-point grid"},
        {"grid_step", trainer->grid().step},
        {"log2_sigma_in_grid_units", trainer->grid().log2_sigma},
        {"clip_for_sum", trainer->grid().clip_for_sum}};
  }
  if (is_private) {
    const auto total = rdp_of(phases, sigma, steps, o.tuning_runs, true).epsilon(o.delta);
    const auto per_run = rdp_of(phases, sigma, steps, 1, true).epsilon(o.delta);
    // The PLD accountant over the same phases: a tighter epsilon for the
    // same noise (docs/math.md §6.7); the run was calibrated with RDP.
    const PldValue pld_epsilon = pld_of(phases, sigma, steps, o.tuning_runs, o.delta);
    nlohmann::json composed = nlohmann::json::array();
    if (phases.vocabulary_sigma > 0) {
      composed.push_back({{"phase", "vocabulary"}, {"q", 1}, {"noise_multiplier", phases.vocabulary_sigma}, {"steps", 1}});
    }
    if (phases.count_sigma > 0) {
      composed.push_back({{"phase", "unit count"}, {"q", 1}, {"noise_multiplier", phases.count_sigma}, {"steps", 1}});
    }
    composed.push_back({{"phase", "dp-sgd"}, {"q", q}, {"noise_multiplier", sigma}, {"steps", steps}});
    if (phases.validation_sigma > 0) {
      composed.push_back({{"phase", "validation"}, {"q", 1}, {"noise_multiplier", phases.validation_sigma}, {"steps", 1}});
    }
    summary["privacy"] = {{"epsilon", total.epsilon},
                          {"delta", o.delta},
                          {"order", total.order},
                          {"accountant", "rdp"},
                          {"epsilon_pld", pld_epsilon ? nlohmann::json(pld_epsilon.value)
                                                      : nlohmann::json(pld_epsilon.error)},
                          {"tuning_runs", o.tuning_runs},
                          {"epsilon_per_run", per_run.epsilon},
                          {"composition",
                           o.tuning_runs == 1
                               ? "one run"
                               : std::to_string(o.tuning_runs) +
                                     " runs of this configuration composed (RDP): epsilon "
                                     "bounds the whole tuning"},
                          {"phases_per_run", composed},
                          {"unit", "corpus unit (line, fortune or user)"},
                          {"seeded_for_reproducibility", o.seed.has_value()}};
  } else {
    summary["privacy"] = {{"epsilon", "inf"}, {"accountant", "none (non-private)"}};
  }
  summary["validation"] = valid_json;
  summary["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  trained.summary_json = summary.dump();
  return TrainReport{std::move(trained), summary.dump(2)};
}

}  // namespace blur::trainer
