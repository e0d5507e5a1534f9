#include "trainer/dpsgd/run_plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace blur::trainer {

namespace {

using nlohmann::json;

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

template <typename T>
std::optional<T> optional_from(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<T>();
}

struct Setting {
  const char* name;
  std::function<json(const TrainOptions&)> get;
  std::function<void(TrainOptions&, const json&)> set;
};

#define BLUR_SETTING(name, field, type)                              \
  Setting {                                                          \
    name, [](const TrainOptions& o) { return json(o.field); },       \
        [](TrainOptions& o, const json& v) { o.field = v.get<type>(); } \
  }

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      BLUR_SETTING("corpus", corpus, std::string),
      Setting{"format", [](const TrainOptions& o) { return json(static_cast<int>(o.format)); },
              [](TrainOptions& o, const json& v) { o.format = static_cast<CorpusFormat>(v.get<int>()); }},
      Setting{"epsilon",
              [](const TrainOptions& o) {
                return std::isinf(o.epsilon) ? json("inf") : json(o.epsilon);
              },
              [](TrainOptions& o, const json& v) {
                o.epsilon = v.is_string() ? std::numeric_limits<double>::infinity()
                                          : v.get<double>();
              }},
      BLUR_SETTING("delta", delta, double),
      Setting{"noise-multiplier",
              [](const TrainOptions& o) { return optional_json(o.noise_multiplier); },
              [](TrainOptions& o, const json& v) { o.noise_multiplier = optional_from<double>(v); }},
      BLUR_SETTING("epochs", epochs, double),
      BLUR_SETTING("batch", expected_batch, double),
      BLUR_SETTING("clip", clip_norm, double),
      BLUR_SETTING("learning-rate", learning_rate, double),
      Setting{"lr-schedule", [](const TrainOptions& o) { return json(static_cast<int>(o.schedule)); },
              [](TrainOptions& o, const json& v) {
                o.schedule = static_cast<TrainOptions::Schedule>(v.get<int>());
              }},
      BLUR_SETTING("momentum", momentum, double),
      BLUR_SETTING("embedding", embedding, int32_t),
      BLUR_SETTING("hidden", hidden, int32_t),
      BLUR_SETTING("vocab-size", vocab_size, size_t),
      BLUR_SETTING("vocab-noise", vocab_noise_multiplier, double),
      BLUR_SETTING("vocab-words-per-unit", vocab_words_per_unit, size_t),
      BLUR_SETTING("max-tokens", max_tokens, size_t),
      BLUR_SETTING("canary", canary, std::string),
      BLUR_SETTING("canary-repeats", canary_repeats, uint32_t),
      Setting{"units-estimate",
              [](const TrainOptions& o) { return optional_json(o.units_estimate); },
              [](TrainOptions& o, const json& v) { o.units_estimate = optional_from<double>(v); }},
      BLUR_SETTING("count-noise", count_noise_multiplier, double),
      BLUR_SETTING("validation-corpus", validation_corpus, std::string),
      BLUR_SETTING("validation-noise", validation_noise_multiplier, double),
      BLUR_SETTING("tuning-runs", tuning_runs, uint32_t),
      BLUR_SETTING("train-only", trained_groups, uint32_t),
      Setting{"seed", [](const TrainOptions& o) { return optional_json(o.seed); },
              [](TrainOptions& o, const json& v) { o.seed = optional_from<uint64_t>(v); }},
  };
  return table;
}

#undef BLUR_SETTING

}  // namespace

json requested_settings(const TrainOptions& options) {
  json out = json::object();
  for (const Setting& s : settings()) out[s.name] = s.get(options);
  return out;
}

TrainOptions resumed_options(const TrainOptions& options, const json& requested) {
  TrainOptions out = options;
  for (const Setting& s : settings()) {
    // Plans written before --train-only trained every group (the default).
    if (!requested.contains(s.name) && std::string(s.name) == "train-only") continue;
    if (!requested.contains(s.name)) {
      throw std::runtime_error(std::string("checkpoint: its plan lacks '") + s.name + "'");
    }
    const json& planned = requested[s.name];
    const bool given =
        std::find(options.given.begin(), options.given.end(), s.name) != options.given.end();
    // "epsilon" is meaningless when the noise multiplier is given (the
    // command line then sets a placeholder), so it is compared only
    // without one.
    const bool placeholder = std::string(s.name) == "epsilon" && options.noise_multiplier;
    if (given && !placeholder && s.get(options) != planned) {
      throw std::invalid_argument("--" + std::string(s.name) + " " + s.get(options).dump() +
                                  " disagrees with the checkpoint's " + planned.dump() +
                                  ": a resumed run trains and accounts the plan it started "
                                  "with; drop the option, or start a new run");
    }
    s.set(out, planned);
  }
  return out;
}

}  // namespace blur::trainer
