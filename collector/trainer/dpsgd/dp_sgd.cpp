#include "trainer/dpsgd/dp_sgd.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "mbedtls/sha256.h"
#include "trainer/model/parallel.h"
#include "trainer/random/discrete_gaussian.h"

namespace blur::trainer {

void validate(const DpSgdConfig& c) {
  if (!(c.sampling_rate > 0 && c.sampling_rate <= 1)) {
    throw std::invalid_argument("DpSgdConfig: sampling rate must be in (0, 1]");
  }
  if (c.dataset_size == 0) throw std::invalid_argument("DpSgdConfig: empty dataset");
  if (!(c.noise_multiplier >= 0) || !std::isfinite(c.noise_multiplier)) {
    throw std::invalid_argument("DpSgdConfig: noise multiplier must be finite and >= 0");
  }
  if (!(c.clip_norm > 0)) throw std::invalid_argument("DpSgdConfig: clip norm must be > 0");
  if (c.noise_multiplier > 0 && !std::isfinite(c.clip_norm)) {
    throw std::invalid_argument("DpSgdConfig: noise requires a finite clip norm");
  }
  if (!(c.learning_rate > 0) || !std::isfinite(c.learning_rate)) {
    throw std::invalid_argument("DpSgdConfig: learning rate must be finite and > 0");
  }
  if (!(c.momentum >= 0 && c.momentum < 1)) {
    throw std::invalid_argument("DpSgdConfig: momentum must be in [0, 1)");
  }
  if (!(c.expected_batch >= 0) || !std::isfinite(c.expected_batch)) {
    throw std::invalid_argument("DpSgdConfig: expected batch must be finite and >= 0");
  }
  if (c.trained_groups == 0 || (c.trained_groups & ~uint32_t{kAllGroups}) != 0) {
    throw std::invalid_argument("DpSgdConfig: trained groups must be a non-empty set of groups");
  }
}

namespace {
struct GroupName {
  const char* name;
  uint32_t group;
};
constexpr GroupName kGroupNames[] = {
    {"embedding", kEmbeddingGroup}, {"lstm", kLstmGroup}, {"output", kOutputGroup}};
}  // namespace

uint32_t parse_trained_groups(const std::string& names) {
  if (names == "all") return kAllGroups;
  uint32_t groups = 0;
  size_t start = 0;
  while (start <= names.size()) {
    const size_t comma = std::min(names.find(',', start), names.size());
    const std::string name = names.substr(start, comma - start);
    uint32_t found = 0;
    for (const GroupName& g : kGroupNames) {
      if (name == g.name) found = g.group;
    }
    if (found == 0) {
      throw std::invalid_argument("unknown parameter group '" + name +
                                  "' (embedding, lstm, output, or all)");
    }
    groups |= found;
    start = comma + 1;
  }
  return groups;
}

std::string trained_group_names(uint32_t groups) {
  if (groups == kAllGroups) return "all";
  std::string out;
  for (const GroupName& g : kGroupNames) {
    if (groups & g.group) out += (out.empty() ? "" : ",") + std::string(g.name);
  }
  return out;
}

std::vector<uint64_t> poisson_sample(const TrainSeed& seed, uint64_t step, uint64_t dataset_size,
                                     double sampling_rate) {
  DrbgStream stream(seed, "sample", step);
  std::vector<uint64_t> chosen;
  for (uint64_t i = 0; i < dataset_size; ++i) {
    if (stream.bernoulli(sampling_rate)) chosen.push_back(i);
  }
  return chosen;
}

DpSgdTrainer::DpSgdTrainer(LanguageModel model, const DpSgdConfig& config, const TrainSeed& seed)
    : model_(std::move(model)),
      config_(config),
      seed_(seed),
      velocity_(model_.parameter_count(), 0.0f),
      gradient_(model_.parameter_count(), 0.0f) {
  validate(config_);
  lstm_begin_ = model_.blocks()[LanguageModel::kLstmWeight].offset;
  output_begin_ = model_.blocks()[LanguageModel::kOutputWeight].offset;
  if (config_.noise_multiplier > 0) {
    grid_ = noise_grid(config_.noise_multiplier, config_.clip_norm, model_.parameter_count());
  }
}

std::vector<uint64_t> DpSgdTrainer::sample() const {
  return poisson_sample(seed_, step_, config_.dataset_size, config_.sampling_rate);
}

void DpSgdTrainer::set_learning_rate(double learning_rate) {
  if (!(learning_rate > 0) || !std::isfinite(learning_rate)) {
    throw std::invalid_argument("DpSgdTrainer: learning rate must be positive and finite");
  }
  config_.learning_rate = learning_rate;
}

void DpSgdTrainer::set_trained_groups(uint32_t groups) {
  DpSgdConfig changed = config_;
  changed.trained_groups = groups;
  validate(changed);
  config_ = changed;
}

DpSgdStepStats DpSgdTrainer::step(const std::vector<Example>& dataset) {
  if (dataset.size() != config_.dataset_size) {
    throw std::invalid_argument("DpSgdTrainer: dataset size differs from the config's");
  }
  ExampleBatch batch;
  for (uint64_t index : sample()) batch.push_back(&dataset[index]);
  return step(batch);
}

namespace {

// units[i] = round(S_i / s) + Z_i, integers held exactly in doubles. S / s
// is clamped to +-2^51 (a coordinatewise contraction: the sensitivity does
// not grow; NaN counts as 0) and rounded to nearest by adding and
// subtracting 1.5 * 2^52 (exact for |x| <= 2^51; no libm call). Z converts
// exactly by the same constant (its bits plus those of 1.5 * 2^52, minus
// 1.5 * 2^52: |Z| < 2^40, discrete_gaussian.h's largest blocks), and the
// sum stays below 2^52. Branch-free and inlined with a constant n, so the
// compiler vectorizes it.
inline void round_and_add_noise(const float* __restrict sum, const int64_t* __restrict z,
                                double* __restrict units, size_t n, double inverse_step) {
  constexpr double kLimit = 2251799813685248.0;       // 2^51
  constexpr double kRound = 6755399441055744.0;       // 1.5 * 2^52
  constexpr int64_t kRoundBits = 0x4338000000000000;  // its bits
  for (size_t i = 0; i < n; ++i) {
    double x = static_cast<double>(sum[i]) * inverse_step;
    x = x == x ? x : 0.0;
    x = x < -kLimit ? -kLimit : x > kLimit ? kLimit : x;
    double noise;
    const int64_t bits = z[i] + kRoundBits;
    std::memcpy(&noise, &bits, sizeof noise);
    units[i] = ((x + kRound) - kRound) + (noise - kRound);
  }
}

// v = mu v + units s / B; theta -= lr v.
inline void momentum_update(const double* __restrict units, float* __restrict v,
                            float* __restrict theta, size_t n, double unit_scale, float mu,
                            float lr) {
  for (size_t i = 0; i < n; ++i) {
    v[i] = mu * v[i] + static_cast<float>(units[i] * unit_scale);
    theta[i] -= lr * v[i];
  }
}

}  // namespace

DpSgdStepStats DpSgdTrainer::step(const ExampleBatch& batch) {
  const size_t P = model_.parameter_count();
  float* g = gradient_.data();

  const bool noisy = config_.noise_multiplier > 0;
  GradientOptions options;
  options.clip_norm = noisy ? grid_.clip_for_sum : config_.clip_norm;
  options.norm_groups = config_.trained_groups;
  options.overwrite = true;
  const BatchGradientStats stats = model_.accumulate_gradient(batch, options, g);

  // Noisy: units = round(S / s) + Z (integers), then u = units s / B.
  // Plain: u = S / B. Then v = mu v + u; theta -= lr v.
  const double divisor = config_.expected_batch_size();
  const auto lr = static_cast<float>(config_.learning_rate);
  const auto mu = static_cast<float>(config_.momentum);
  float* theta = model_.parameters();
  float* v = velocity_.data();
  // Both loops run over the worker threads (noise_threads == 1: one); the
  // result does not depend on the split.
  // Coordinates of untrained groups are skipped: no noise, no update.
  const bool all_trained = config_.trained_groups == kAllGroups;
  auto trained = [&](size_t k) {
    if (all_trained) return true;
    const uint32_t group = k < lstm_begin_     ? kEmbeddingGroup
                           : k < output_begin_ ? kLstmGroup
                                               : kOutputGroup;
    return (config_.trained_groups & group) != 0;
  };
  auto run = [&](size_t n, const std::function<void(size_t, size_t)>& body) {
    if (config_.noise_threads == 1) {
      body(0, n);
    } else {
      parallel_items(n, body);
    }
  };
  if (noisy) {
    // Per chunk of the noise (DiscreteGaussianNoise::kChunk coordinates):
    // draw Z, then units = round(S / s) + Z (round_and_add_noise), then the
    // update.
    const DiscreteGaussianNoise noise(seed_, "noise", step_);
    const double inverse_step = 1.0 / grid_.step;
    const double unit_scale = grid_.step / divisor;
    constexpr size_t kChunk = DiscreteGaussianNoise::kChunk;
    if (keep_released_) units_.resize(P);
    run((P + kChunk - 1) / kChunk, [&](size_t first, size_t last) {
      std::vector<int64_t> z(kChunk);
      std::vector<double> units(kChunk);
      for (size_t c = first; c < last; ++c) {
        const size_t begin = c * kChunk, count = std::min(kChunk, P - begin);
        const bool one_group = (begin >= lstm_begin_ || begin + count <= lstm_begin_) &&
                               (begin >= output_begin_ || begin + count <= output_begin_);
        if (one_group && !trained(begin)) {  // the whole chunk is untrained
          if (keep_released_) std::fill(units_.begin() + begin, units_.begin() + begin + count, 0);
          continue;
        }
        noise.sample_range(z.data(), begin, count, grid_.log2_sigma);
        if (count == kChunk) {  // a constant trip count: the compiler vectorizes these
          round_and_add_noise(g + begin, z.data(), units.data(), kChunk, inverse_step);
        } else {
          round_and_add_noise(g + begin, z.data(), units.data(), count, inverse_step);
        }
        if (keep_released_) {
          for (size_t i = 0; i < count; ++i) {
            units_[begin + i] = trained(begin + i) ? static_cast<int64_t>(units[i]) : 0;
          }
        }
        if (!one_group) {  // a chunk across a group boundary: its trained coordinates only
          for (size_t i = 0; i < count; ++i) {
            if (trained(begin + i)) {
              momentum_update(units.data() + i, v + begin + i, theta + begin + i, 1, unit_scale,
                              mu, lr);
            }
          }
        } else if (count == kChunk) {
          momentum_update(units.data(), v + begin, theta + begin, kChunk, unit_scale, mu, lr);
        } else {
          momentum_update(units.data(), v + begin, theta + begin, count, unit_scale, mu, lr);
        }
      }
    });
  } else {
    const auto scale = static_cast<float>(1.0 / divisor);
    run(P, [&](size_t first, size_t last) {
      for (size_t k = first; k < last; ++k) {
        if (!trained(k)) continue;
        v[k] = mu * v[k] + g[k] * scale;
        theta[k] -= lr * v[k];
      }
    });
  }

  DpSgdStepStats out;
  out.step = step_;
  out.batch_size = batch.size();
  for (size_t j = 0; j < batch.size(); ++j) {
    out.mean_loss += stats.losses[j];
    if (stats.clip_factors[j] < 1) ++out.clipped;
    if (!stats.norms.empty()) out.mean_grad_norm += stats.norms[j];
  }
  if (!batch.empty()) {
    out.mean_loss /= static_cast<double>(batch.size());
    out.mean_grad_norm /= static_cast<double>(batch.size());
  }
  ++step_;
  return out;
}

// --- checkpoints -------------------------------------------------------------

namespace {

// Version 2 adds the expected batch and the run plan (version 1 files are
// refused: they cannot say what their run accounted).
constexpr char kMagic[8] = {'B', 'L', 'U', 'R', 'D', 'P', 'S', '2'};

struct Writer {
  std::vector<uint8_t> bytes;
  template <typename Unsigned>
  void little_endian(Unsigned v) {
    for (size_t i = 0; i < sizeof v; ++i) bytes.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) { little_endian(v); }
  void u32(uint32_t v) { little_endian(v); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void floats(const std::vector<float>& values) { floats(values.data(), values.size()); }
  void floats(const float* values, size_t n) {
    u64(n);
    for (size_t k = 0; k < n; ++k) {
      uint32_t bits;
      std::memcpy(&bits, &values[k], 4);
      u32(bits);
    }
  }
};

struct Reader {
  const std::vector<uint8_t>& bytes;
  size_t at = 0;
  void need(size_t n) {
    if (bytes.size() - at < n) throw std::runtime_error("checkpoint: truncated");
  }
  template <typename Unsigned>
  Unsigned little_endian() {
    need(sizeof(Unsigned));
    Unsigned v = 0;
    for (size_t i = 0; i < sizeof v; ++i) v |= static_cast<Unsigned>(bytes[at + i]) << (8 * i);
    at += sizeof v;
    return v;
  }
  uint64_t u64() { return little_endian<uint64_t>(); }
  uint32_t u32() { return little_endian<uint32_t>(); }
  double f64() {
    const uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  void floats(float* out, size_t expected) {
    if (u64() != expected) throw std::runtime_error("checkpoint: size mismatch");
    need(expected * 4);
    for (size_t k = 0; k < expected; ++k) {
      const uint32_t bits = u32();
      std::memcpy(&out[k], &bits, 4);
    }
  }
};

std::array<uint8_t, 32> sha256(const uint8_t* data, size_t n) {
  std::array<uint8_t, 32> digest{};
  if (mbedtls_sha256_ret(data, n, digest.data(), 0) != 0) {
    throw std::runtime_error("checkpoint: SHA-256 failed");
  }
  return digest;
}

}  // namespace

void DpSgdTrainer::save_checkpoint(const std::string& path, const std::string& plan) const {
  Writer w;
  w.bytes.insert(w.bytes.end(), std::begin(kMagic), std::end(kMagic));
  const LanguageModelConfig& mc = model_.config();
  w.u32(static_cast<uint32_t>(mc.vocab_size));
  w.u32(static_cast<uint32_t>(mc.embedding_dim));
  w.u32(static_cast<uint32_t>(mc.hidden_dim));
  w.f64(config_.sampling_rate);
  w.u64(config_.dataset_size);
  w.f64(config_.noise_multiplier);
  w.f64(config_.clip_norm);
  w.f64(config_.learning_rate);
  w.f64(config_.momentum);
  w.u32(config_.noise_threads);
  w.f64(config_.expected_batch);
  w.u64(plan.size());
  w.bytes.insert(w.bytes.end(), plan.begin(), plan.end());
  w.bytes.insert(w.bytes.end(), seed_.bytes.begin(), seed_.bytes.end());
  w.u64(step_);
  w.floats(model_.parameters(), model_.parameter_count());
  w.floats(velocity_);
  const auto digest = sha256(w.bytes.data(), w.bytes.size());
  w.bytes.insert(w.bytes.end(), digest.begin(), digest.end());

  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(w.bytes.data()),
              static_cast<std::streamsize>(w.bytes.size()));
    out.flush();
    if (!out) throw std::runtime_error("checkpoint: cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("checkpoint: cannot rename to " + path);
  }
}

DpSgdTrainer DpSgdTrainer::load_checkpoint(const std::string& path, std::string* plan) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("checkpoint: cannot open " + path);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof kMagic + 32 || std::memcmp(bytes.data(), kMagic, 7) != 0) {
    throw std::runtime_error("checkpoint: not a Blur DP-SGD checkpoint");
  }
  if (bytes[7] != static_cast<uint8_t>(kMagic[7])) {
    throw std::runtime_error(
        "checkpoint: an older format that does not record its run's privacy parameters; "
        "start the run again");
  }
  const size_t body = bytes.size() - 32;
  const auto digest = sha256(bytes.data(), body);
  if (std::memcmp(digest.data(), bytes.data() + body, 32) != 0) {
    throw std::runtime_error("checkpoint: checksum mismatch");
  }
  const std::vector<uint8_t> content(bytes.begin(), bytes.begin() + static_cast<long>(body));
  Reader r{content, sizeof kMagic};
  LanguageModelConfig mc;
  mc.vocab_size = static_cast<int32_t>(r.u32());
  mc.embedding_dim = static_cast<int32_t>(r.u32());
  mc.hidden_dim = static_cast<int32_t>(r.u32());
  DpSgdConfig config;
  config.sampling_rate = r.f64();
  config.dataset_size = r.u64();
  config.noise_multiplier = r.f64();
  config.clip_norm = r.f64();
  config.learning_rate = r.f64();
  config.momentum = r.f64();
  config.noise_threads = r.u32();
  config.expected_batch = r.f64();
  const uint64_t plan_size = r.u64();
  r.need(plan_size);
  if (plan) plan->assign(content.begin() + static_cast<long>(r.at),
                         content.begin() + static_cast<long>(r.at + plan_size));
  r.at += plan_size;
  TrainSeed seed;
  r.need(seed.bytes.size());
  std::memcpy(seed.bytes.data(), content.data() + r.at, seed.bytes.size());
  r.at += seed.bytes.size();
  const uint64_t step = r.u64();
  LanguageModel model(mc);
  r.floats(model.parameters(), model.parameter_count());
  DpSgdTrainer trainer(std::move(model), config, seed);
  r.floats(trainer.velocity_.data(), trainer.velocity_.size());
  if (r.at != content.size()) throw std::runtime_error("checkpoint: trailing bytes");
  trainer.step_ = step;
  return trainer;
}

}  // namespace blur::trainer
