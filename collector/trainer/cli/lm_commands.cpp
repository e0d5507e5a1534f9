#include "trainer/cli/lm_commands.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "blur/model/next_word_model.h"
#include "blur/model/next_word_predictor.h"
#include "common/discovered_words_file.h"
#include "trainer/accountants/pld_accountant.h"
#include "trainer/accountants/rdp_accountant.h"
#include "trainer/audit/one_run_audit.h"
#include "trainer/data/evaluation.h"
#include "trainer/dpsgd/dp_sgd.h"
#include "trainer/dpsgd/trainer.h"
#include "trainer/model/model_file.h"

namespace blur::trainer {

namespace {

struct TrainArgs {
  TrainOptions options;
  std::string epsilon = "3";
  std::string format = "auto";
  std::string out;
  double noise_multiplier = -1;
  uint64_t seed = 0;
  std::string discovered_words;  // --discovered-words
  double units_estimate = 0;     // --units-estimate (0: the DP count)
  std::string train_only = "all";  // --train-only
};

struct ModelArgs {
  std::string model;
  std::string corpus;
  std::string format = "auto";
  std::string split = "test";
  std::string out;
  std::string canary;
  uint32_t secret_words = 4;
  uint32_t candidates = 4096;
  uint64_t seed = 1;
  std::vector<std::string> prompts;
  uint32_t count = 3;
};

struct AuditArgs {
  OneRunAuditConfig config;
  std::string epsilon = "4";
};

struct PrivacyArgs {
  double sample_rate = -1, noise_multiplier = -1, target_epsilon = -1, delta = -1;
  uint64_t steps = 0;
  std::string conversion = "improved";
};

}  // namespace

struct LanguageModelCommands::State {
  TrainArgs train;
  ModelArgs model;  // eval, export-model, canary, suggest
  PrivacyArgs privacy;
  AuditArgs audit;
  CLI::App* train_cmd = nullptr;
  CLI::App* audit_cmd = nullptr;
  CLI::App* eval_cmd = nullptr;
  CLI::App* privacy_cmd = nullptr;
  CLI::App* export_cmd = nullptr;
  CLI::App* canary_cmd = nullptr;
  CLI::App* suggest_cmd = nullptr;
};

namespace {

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "blur-trainer: %s\n", message.c_str());
  return code;
}

// The corpus a model was trained on (its summary), unless given.
std::string corpus_of(const TrainedModel& trained, const std::string& given) {
  if (!given.empty()) return given;
  const auto summary = nlohmann::json::parse(trained.summary_json, nullptr, false);
  if (summary.is_object() && summary.contains("corpus")) return summary["corpus"];
  return "fortunes";
}

// A prompt's tokens: <s> and its words (no closing </s>).
TokenSequence prompt_tokens(const Vocabulary& vocabulary, const std::string& prompt) {
  TokenSequence tokens = vocabulary.encode_text(prompt);
  while (!tokens.empty() && tokens.back() == Vocabulary::kEnd) tokens.pop_back();
  if (tokens.empty()) tokens.push_back(Vocabulary::kBegin);
  return tokens;
}

int run_train(const TrainArgs& args, const CLI::App& cmd) {
  TrainOptions o = args.options;
  if (!args.discovered_words.empty()) {
    if (!o.vocabulary_file.empty()) {
      return fail("--vocabulary and --discovered-words exclude each other", 2);
    }
    common::DiscoveredWords found;
    std::string error;
    if (!common::read_discovered_words(args.discovered_words, &found, &error)) {
      return fail(error, 2);
    }
    if (found.words.empty()) return fail(args.discovered_words + " holds no discovered words", 1);
    // Alone, they are the vocabulary: the most frequent words that fit, the
    // 4 special tokens beside them. With --init-from they are added to the
    // public model's vocabulary (the new ones: vocabulary_growth.h).
    const size_t fit = o.vocab_size - Vocabulary::kSpecialCount;
    if (o.init_model.empty() && found.words.size() > fit) found.words.resize(fit);
    std::fprintf(stderr, "vocabulary: %zu words from %s\n", found.words.size(),
                 found.source.c_str());
    o.vocabulary_words = std::move(found.words);
    o.vocabulary_words_source = std::move(found.source);
  }
  try {
    o.trained_groups = parse_trained_groups(args.train_only);
  } catch (const std::invalid_argument& e) {
    return fail(std::string("--train-only: ") + e.what(), 2);
  }
  if (o.trained_groups != kAllGroups && o.init_model.empty()) {
    return fail("--train-only needs --init-from (the untrained groups keep its values)", 2);
  }
  if (args.epsilon == "inf") {
    o.epsilon = std::numeric_limits<double>::infinity();
  } else {
    try {
      o.epsilon = std::stod(args.epsilon);
    } catch (const std::exception&) {
      return fail("--epsilon must be a number or inf", 2);
    }
  }
  if (args.noise_multiplier >= 0) {
    o.noise_multiplier = args.noise_multiplier;
    o.epsilon = 1;  // ignored: the noise is given
  }
  if (cmd.count("--seed") > 0) o.seed = args.seed;
  if (args.units_estimate > 0) o.units_estimate = args.units_estimate;
  o.format = parse_corpus_format(args.format);
  // What was given, so a resumed run can refuse what disagrees with its plan.
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() == 0) continue;
    for (const std::string& name : option->get_lnames()) o.given.push_back(name);
  }
  TrainReport report = train_language_model(o, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  });
  save_model(report.trained, args.out);
  std::fprintf(stderr, "model written to %s\n", args.out.c_str());
  std::cout << report.summary_json << "\n";
  return 0;
}

int run_eval(const ModelArgs& args) {
  const TrainedModel trained = load_model(args.model);
  const std::string corpus = corpus_of(trained, args.corpus);
  const EncodedSplits splits =
      encode_corpus(corpus, parse_corpus_format(args.format), trained.vocabulary, 64);
  const std::vector<Example>& held_out =
      args.split == "validation" ? splits.validation : splits.test;
  const size_t v = trained.vocabulary.size();
  const EvaluationResult model =
      evaluate_model(held_out, v, Vocabulary::kSpecialCount, model_forward(trained.model));
  const EvaluationResult unigram =
      evaluate_unigram(splits.train, held_out, v, Vocabulary::kSpecialCount);
  uint64_t words = 0, unknown = 0;  // word tokens of the split, and how many are <unk>
  for (const Example& example : held_out) {
    for (int32_t token : example) {
      words += token == Vocabulary::kUnknown || token >= Vocabulary::kSpecialCount;
      unknown += token == Vocabulary::kUnknown;
    }
  }
  nlohmann::json out = {
      {"model", args.model},
      {"corpus", corpus},
      {"oov_rate", words ? static_cast<double>(unknown) / static_cast<double>(words) : 0.0},
      {"split", args.split},
      {"top1", model.top1},
      {"top3", model.top3},
      {"perplexity", model.perplexity},
      {"word_targets", model.word_targets},
      {"unigram",
       {{"top1", unigram.top1}, {"top3", unigram.top3}, {"perplexity", unigram.perplexity}}}};
  const auto summary = nlohmann::json::parse(trained.summary_json, nullptr, false);
  if (summary.is_object() && summary.contains("privacy")) out["privacy"] = summary["privacy"];
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_privacy(const PrivacyArgs& p, const CLI::App& cmd) {
  const bool calibrate = cmd.count("--target-epsilon") > 0;
  if (calibrate == (cmd.count("--noise-multiplier") > 0)) {
    return fail("give exactly one of --noise-multiplier and --target-epsilon", 2);
  }
  const RdpConversion conversion =
      p.conversion == "classic" ? RdpConversion::kClassic : RdpConversion::kImproved;
  auto epsilon_of = [&](double sigma) {
    RdpAccountant accountant;
    accountant.add(p.sample_rate, sigma, p.steps);
    return accountant.epsilon(p.delta, conversion);
  };
  nlohmann::json out = {{"accountant", "rdp"},
                        {"conversion", p.conversion},
                        {"sample_rate", p.sample_rate},
                        {"steps", p.steps},
                        {"delta", p.delta}};
  double sigma = p.noise_multiplier;
  if (calibrate) {
    sigma = calibrate_noise_multiplier([&](double s) { return epsilon_of(s).epsilon; },
                                       p.target_epsilon);
    out["target_epsilon"] = p.target_epsilon;
  }
  const EpsilonAtDelta e = epsilon_of(sigma);
  out["noise_multiplier"] = sigma;
  out["epsilon"] = std::isinf(e.epsilon) ? nlohmann::json("inf") : nlohmann::json(e.epsilon);
  out["order"] = e.order;
  // The PLD accountant at the same noise: tighter (docs/math.md §6.7).
  const PldValue pld = pld_epsilon(p.sample_rate, sigma, p.steps, p.delta);
  if (!pld) return fail("PLD accountant: " + pld.error, 2);
  out["epsilon_pld"] = std::isinf(pld.value) ? nlohmann::json("inf") : nlohmann::json(pld.value);
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_audit(const AuditArgs& args) {
  OneRunAuditConfig config = args.config;
  if (args.epsilon == "inf") {
    config.epsilon = std::numeric_limits<double>::infinity();
  } else {
    try {
      config.epsilon = std::stod(args.epsilon);
    } catch (const std::exception&) {
      return fail("--epsilon must be a number or inf", 2);
    }
  }
  const OneRunAuditResult r = run_one_run_audit(config);
  auto number = [](double x) { return std::isinf(x) ? nlohmann::json("inf") : nlohmann::json(x); };
  nlohmann::json out = {{"canaries", r.canaries},
                        {"included", r.included},
                        {"guesses", r.guesses},
                        {"correct", r.correct},
                        {"steps", r.steps},
                        {"noise_multiplier", r.noise_multiplier},
                        {"accountant_epsilon", number(r.accountant_epsilon)},
                        {"delta", config.delta},
                        {"confidence", config.confidence},
                        {"epsilon_lower_bound", r.epsilon_lower}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_export(const ModelArgs& args) {
  const TrainedModel trained = load_model(args.model);
  std::string error;
  const std::vector<uint8_t> bytes =
      export_device_model(device_weights(trained.model, Vocabulary::kSpecialCount), &error);
  if (bytes.empty()) return fail("cannot export " + args.model + ": " + error, 1);
  std::ofstream file(args.out, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!file) return fail("cannot write " + args.out, 1);
  // The device maps typed words to ids with the model's vocabulary: one
  // token per line in id order, after the header (the app ships both).
  const std::string vocabulary_out = args.out + ".vocab";
  trained.vocabulary.save(vocabulary_out);
  // Check the device model against the float one on held-out contexts.
  const auto model = NextWordModel::open(bytes.data(), bytes.size());
  std::vector<uint32_t> scratch(NextWordPredictor::scratch_size(model.value()) / 4 + 1);
  NextWordPredictor predictor;
  if (!model.ok() || predictor.init(model.value(), reinterpret_cast<uint8_t*>(scratch.data()),
                                    scratch.size() * 4) != Status::kOk) {
    return fail("the exported model does not open on the device", 1);
  }
  const EncodedSplits splits =
      encode_corpus(corpus_of(trained, args.corpus), CorpusFormat::kAuto, trained.vocabulary, 64);
  const SequenceForward forward = model_forward(trained.model);
  uint64_t contexts = 0, agree = 0;
  for (const Example& example : splits.test) {
    if (contexts >= 2000) break;
    predictor.reset();
    forward(example, [&](size_t t, const float* logits) {
      (void)predictor.feed(static_cast<uint32_t>(example[t]));
      uint32_t id = 0;
      int32_t score = 0;
      (void)predictor.top_k(1, &id, &score);
      size_t best = Vocabulary::kSpecialCount;
      for (size_t w = best; w < trained.vocabulary.size(); ++w) {
        if (logits[w] > logits[best]) best = w;
      }
      agree += id == best;
      ++contexts;
    });
  }
  nlohmann::json out = {{"out", args.out},
                        {"bytes", bytes.size()},
                        {"vocabulary", vocabulary_out},
                        {"vocab", trained.vocabulary.size()},
                        {"embedding", trained.model.config().embedding_dim},
                        {"hidden", trained.model.config().hidden_dim},
                        {"contexts_checked", contexts},
                        {"top1_agreement_with_float", contexts ? double(agree) / contexts : 0.0}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_canary(const ModelArgs& args) {
  const TrainedModel trained = load_model(args.model);
  const Vocabulary& v = trained.vocabulary;
  TokenSequence canary = v.encode_text(args.canary);
  // <s> prefix... secret words </s>: the secret is the last N words.
  if (canary.size() < args.secret_words + 2) return fail("the canary is too short", 2);
  const size_t secret_end = canary.size() - 1, secret_begin = secret_end - args.secret_words;
  for (size_t i = secret_begin; i < secret_end; ++i) {
    if (canary[i] < Vocabulary::kSpecialCount) {
      return fail("the canary's secret words must be in the model's vocabulary", 2);
    }
  }
  std::mt19937_64 rng(args.seed);
  std::uniform_int_distribution<int32_t> word(Vocabulary::kSpecialCount,
                                              static_cast<int32_t>(v.size()) - 1);
  std::vector<TokenSequence> others;
  while (others.size() + 1 < args.candidates) {
    TokenSequence other = canary;
    for (size_t i = secret_begin; i < secret_end; ++i) other[i] = word(rng);
    if (other != canary) others.push_back(std::move(other));
  }
  const ExposureResult r = canary_exposure(canary, others, v.size(), model_forward(trained.model));
  nlohmann::json out = {{"model", args.model},
                        {"canary", args.canary},
                        {"secret_words", args.secret_words},
                        {"candidates", r.candidates},
                        {"rank", r.rank},
                        {"exposure", r.exposure},
                        {"max_exposure", std::log2(static_cast<double>(r.candidates))}};
  std::cout << out.dump(2) << "\n";
  return 0;
}

int run_suggest(const ModelArgs& args) {
  const TrainedModel trained = load_model(args.model);
  const SequenceForward forward = model_forward(trained.model);
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& prompt : args.prompts) {
    TokenSequence tokens = prompt_tokens(trained.vocabulary, prompt);
    tokens.push_back(Vocabulary::kPad);  // a slot for the next word
    std::vector<std::string> words;
    forward(tokens, [&](size_t t, const float* logits) {
      if (t + 2 != tokens.size()) return;
      std::vector<size_t> ids;
      for (size_t w = Vocabulary::kSpecialCount; w < trained.vocabulary.size(); ++w)
        ids.push_back(w);
      const size_t k = std::min<size_t>(args.count, ids.size());
      std::partial_sort(ids.begin(), ids.begin() + static_cast<long>(k), ids.end(),
                        [&](size_t a, size_t b) { return logits[a] > logits[b]; });
      for (size_t i = 0; i < k; ++i)
        words.push_back(trained.vocabulary.word(static_cast<int32_t>(ids[i])));
    });
    out.push_back({{"prompt", prompt}, {"suggestions", words}});
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace

LanguageModelCommands::LanguageModelCommands(CLI::App& app) : state_(std::make_unique<State>()) {
  State& st = *state_;
  TrainOptions& o = st.train.options;
  auto* t = app.add_subcommand(
      "train",
      "Train the DP-SGD next-word model on a text corpus.\n"
      "A private run releases only: the model, its DP vocabulary, the DP count (or public "
      "estimate) of the training units, q, steps, noise multiplier, the accounting, and a "
      "validation that is DP or on --validation-corpus. It accounts (RDP, PLD beside) the "
      "vocabulary, the unit count, the DP-SGD steps (exact discrete Gaussian noise) and the "
      "DP validation, composed over --tuning-runs. Never printed or stored: the exact number "
      "of units, batch sizes, losses, clipped counts. --resume continues the checkpoint's "
      "plan and refuses options that disagree with it. Evaluate on a named test corpus with "
      "`eval`.");
  st.train_cmd = t;
  t->add_option("--corpus", o.corpus,
                "Text file or directory (lines, user_id<TAB>text, or fortune files), or "
                "'fortunes' for Debian's fortunes")
      ->capture_default_str();
  t->add_option("--format", st.train.format, "auto, lines, user_tab or fortune")
      ->check(CLI::IsMember({"auto", "lines", "user_tab", "fortune"}))
      ->capture_default_str();
  t->add_option("--epsilon", st.train.epsilon,
                "Target epsilon of the whole run (vocabulary + DP-SGD); 'inf' trains without "
                "privacy")
      ->capture_default_str();
  t->add_option("--delta", o.delta, "delta")->check(CLI::Range(1e-300, 0.5))->capture_default_str();
  t->add_option("--noise-multiplier", st.train.noise_multiplier,
                "Use this DP-SGD noise multiplier instead of calibrating to --epsilon")
      ->check(CLI::NonNegativeNumber);
  t->add_option("--out", st.train.out, "Model file to write")->required();
  t->add_option("--epochs", o.epochs, "Passes over the data (in expectation)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--batch", o.expected_batch, "Expected batch size qN")
      ->check(CLI::Range(1.0, 1e7))
      ->capture_default_str();
  t->add_option("--clip", o.clip_norm, "Per-unit gradient clipping norm C")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--learning-rate", o.learning_rate, "SGD learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--momentum", o.momentum, "Heavy-ball momentum")
      ->check(CLI::Range(0.0, 0.999))
      ->capture_default_str();
  t->add_option("--embedding", o.embedding, "Embedding width")
      ->check(CLI::Range(1, 512))
      ->capture_default_str();
  t->add_option("--hidden", o.hidden, "LSTM width")
      ->check(CLI::Range(1, 512))
      ->capture_default_str();
  t->add_option("--vocab-size", o.vocab_size, "Vocabulary size, 4 special tokens included")
      ->check(CLI::Range(8, 65536))
      ->capture_default_str();
  t->add_option("--vocabulary", o.vocabulary_file,
                "Vocabulary file (one word per line) instead of the DP vocabulary")
      ->check(CLI::ExistingFile);
  t->add_option("--init-from", o.init_model,
                "Fine-tune this model, trained on PUBLIC text (--epsilon inf): its vocabulary "
                "and parameters are the start; only the fine-tuning is private")
      ->check(CLI::ExistingFile);
  t->add_option("--train-only", st.train.train_only,
                "Fine-tune only these parameter groups of the --init-from model (comma-separated: "
                "embedding, lstm, output); the others keep its values. DP noise then covers "
                "fewer coordinates; the accounting is the same")
      ->capture_default_str();
  t->add_option("--lr-schedule", o.schedule, "constant, or cosine (decays to 0 over the run)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, TrainOptions::Schedule>{
              {"constant", TrainOptions::Schedule::kConstant},
              {"cosine", TrainOptions::Schedule::kCosine}},
          CLI::ignore_case));
  t->add_option("--threads", o.threads, "Worker threads (default: one per core)")
      ->check(CLI::Range(1, 256));
  t->add_option("--discovered-words", st.train.discovered_words,
                "Vocabulary: the words of a word-discovery (pem, sfp) metric, from "
                "`blur-collector discovered-words --out FILE` (their local DP was paid on the "
                "devices: no central epsilon); the most frequent --vocab-size - 4 are used, or, "
                "with --init-from, those the public model lacks are added to its vocabulary")
      ->check(CLI::ExistingFile);
  t->add_option("--vocab-noise", o.vocab_noise_multiplier,
                "Noise multiplier of the DP vocabulary's Gaussian counts")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--max-tokens", o.max_tokens, "Tokens used per unit")
      ->check(CLI::Range(2, 4096))
      ->capture_default_str();
  t->add_option("--canary", o.canary, "Insert this sentence as extra training units (audit)");
  t->add_option("--canary-repeats", o.canary_repeats, "How many times to insert --canary");
  t->add_option("--checkpoint", o.checkpoint, "Checkpoint file (secret: holds the noise seed)");
  t->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_flag("--resume", o.resume, "Continue from --checkpoint");
  t->add_option("--seed", st.train.seed,
                "Reproducible run (tests, experiments): the noise is then NOT secret");
  t->add_option("--stop-after", o.stop_after_steps,
                "Stop after this many steps (with a checkpoint), as if interrupted");
  t->add_option("--units-estimate", st.train.units_estimate,
                "A PUBLIC estimate of the number of training units (sets q = batch / it); "
                "otherwise they are counted with DP (--count-noise)")
      ->check(CLI::Range(1.0, 1e12));
  t->add_option("--count-noise", o.count_noise_multiplier,
                "Noise multiplier of the DP count of the training units")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  t->add_option("--validation-corpus", o.validation_corpus,
                "PUBLIC text to validate on (exact top-1/top-3/perplexity); otherwise DP "
                "validation on the private split (--validation-noise)")
      ->check(CLI::ExistingPath);
  t->add_option("--validation-noise", o.validation_noise_multiplier,
                "Noise multiplier of the DP validation (per-unit top-1/top-3 sums); 0: none "
                "(with --epsilon inf: 0 skips the exact validation)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  t->add_option("--tuning-runs", o.tuning_runs,
                "K: runs of a hyperparameter search; the accounting composes K runs like this "
                "one, so --epsilon is what all of them spend together")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  t->add_option("--progress-every", o.progress_every, "Steps between progress lines")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  auto* e = app.add_subcommand("eval", "Top-1/top-3 accuracy and perplexity of a model");
  st.eval_cmd = e;
  e->add_option("--model", st.model.model, "Model file")->required()->check(CLI::ExistingFile);
  e->add_option("--corpus", st.model.corpus, "Corpus (default: the one it was trained on)");
  e->add_option("--format", st.model.format, "auto, lines, user_tab or fortune")
      ->check(CLI::IsMember({"auto", "lines", "user_tab", "fortune"}));
  e->add_option("--split", st.model.split, "test or validation")
      ->check(CLI::IsMember({"test", "validation"}))
      ->capture_default_str();

  auto* p = app.add_subcommand("privacy", "Epsilon of DP-SGD (RDP accountant), or its noise");
  st.privacy_cmd = p;
  p->add_option("--sample-rate", st.privacy.sample_rate, "Poisson sampling rate q")
      ->required()
      ->check(CLI::Range(0.0, 1.0));
  p->add_option("--noise-multiplier", st.privacy.noise_multiplier, "sigma")
      ->check(CLI::NonNegativeNumber);
  p->add_option("--target-epsilon", st.privacy.target_epsilon, "Calibrate sigma to this epsilon")
      ->check(CLI::PositiveNumber);
  p->add_option("--steps", st.privacy.steps, "Steps")->required();
  p->add_option("--delta", st.privacy.delta, "delta")->required()->check(CLI::Range(1e-300, 0.999));
  p->add_option("--conversion", st.privacy.conversion, "improved or classic")
      ->check(CLI::IsMember({"improved", "classic"}))
      ->capture_default_str();

  OneRunAuditConfig& ac = st.audit.config;
  auto* a = app.add_subcommand(
      "audit-dpsgd",
      "Audit DP-SGD in one training run (Steinke, Nasr, Jagielski 2023): canaries included by "
      "fair coins, the real trainer on a small model, guesses from the canaries' losses, and "
      "the epsilon lower bound they prove (vs the accountant's epsilon)");
  st.audit_cmd = a;
  a->add_option("--epsilon", st.audit.epsilon, "DP-SGD's target epsilon, or inf (not private)")
      ->capture_default_str();
  a->add_option("--delta", ac.delta, "delta")->check(CLI::Range(1e-300, 0.5))->capture_default_str();
  a->add_option("--canaries", ac.canaries, "m: canaries, each included by a fair coin")
      ->check(CLI::Range(2, 1000000))
      ->capture_default_str();
  a->add_option("--guesses", ac.guesses, "Guesses (even; the rest abstain)")
      ->capture_default_str();
  a->add_option("--background", ac.background, "Units of background text")->capture_default_str();
  a->add_option("--epochs", ac.epochs, "Passes over the data")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  a->add_option("--sample-rate", ac.sampling_rate, "Poisson sampling rate q")
      ->check(CLI::Range(1e-9, 1.0))
      ->capture_default_str();
  a->add_option("--learning-rate", ac.learning_rate, "SGD learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  a->add_option("--clip", ac.clip_norm, "Clipping norm C")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  a->add_option("--confidence", ac.confidence, "Confidence of the lower bound")
      ->check(CLI::Range(0.5, 0.999999))
      ->capture_default_str();
  a->add_option("--seed", ac.seed, "Seed of canaries, coins and training")->capture_default_str();

  auto* x = app.add_subcommand("export-model", "Write the int8 device model (SDK predictor)");
  st.export_cmd = x;
  x->add_option("--model", st.model.model, "Model file")->required()->check(CLI::ExistingFile);
  x->add_option("--out", st.model.out, "Device model file to write")->required();
  x->add_option("--corpus", st.model.corpus, "Held-out text to check it on (default: training's)");

  auto* c = app.add_subcommand("canary", "Exposure of a canary sentence (Carlini et al.)");
  st.canary_cmd = c;
  c->add_option("--model", st.model.model, "Model file")->required()->check(CLI::ExistingFile);
  c->add_option("--canary", st.model.canary, "The inserted sentence")->required();
  c->add_option("--secret-words", st.model.secret_words, "Its last N words are the secret")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  c->add_option("--candidates", st.model.candidates, "R: fillings ranked, the canary's included")
      ->check(CLI::Range(2, 10000000))
      ->capture_default_str();
  c->add_option("--seed", st.model.seed, "Seed of the other fillings")->capture_default_str();

  auto* s = app.add_subcommand("suggest", "Next-word suggestions for prompts");
  st.suggest_cmd = s;
  s->add_option("--model", st.model.model, "Model file")->required()->check(CLI::ExistingFile);
  s->add_option("--prompt", st.model.prompts, "A prompt (repeatable)")->required();
  s->add_option("--count", st.model.count, "Suggestions per prompt")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
}

LanguageModelCommands::~LanguageModelCommands() = default;

int LanguageModelCommands::run() const {
  const State& st = *state_;
  try {
    if (st.train_cmd->parsed()) return run_train(st.train, *st.train_cmd);
    if (st.eval_cmd->parsed()) return run_eval(st.model);
    if (st.privacy_cmd->parsed()) return run_privacy(st.privacy, *st.privacy_cmd);
    if (st.audit_cmd->parsed()) return run_audit(st.audit);
    if (st.export_cmd->parsed()) return run_export(st.model);
    if (st.canary_cmd->parsed()) return run_canary(st.model);
    if (st.suggest_cmd->parsed()) return run_suggest(st.model);
  } catch (const std::invalid_argument& e) {
    return fail(e.what(), 2);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
  return 2;
}

}  // namespace blur::trainer
