#include "trainer/model/language_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace blur::collector {

using Eigen::Index;

namespace {

// Generous bounds that keep every index and size computation far from
// overflow (V * N and 4H * (d_e + H) stay well inside Index).
constexpr int32_t kMaxVocab = 1 << 22;
constexpr int32_t kMaxDim = 1 << 13;

void check_config(const LanguageModelConfig& c) {
  if (c.vocab_size <= 0 || c.vocab_size > kMaxVocab || c.embedding_dim <= 0 ||
      c.embedding_dim > kMaxDim || c.hidden_dim <= 0 || c.hidden_dim > kMaxDim) {
    throw std::invalid_argument("LanguageModel: sizes out of range");
  }
}

}  // namespace

template <typename Scalar>
LanguageModelT<Scalar>::LanguageModelT(const LanguageModelConfig& config) : config_(config) {
  check_config(config_);
  build_blocks();
}

template <typename Scalar>
LanguageModelT<Scalar>::LanguageModelT(const LanguageModelConfig& config, const TrainSeed& seed)
    : LanguageModelT(config) {
  DrbgStream stream(seed, "init", 0);
  const double e = config_.embedding_dim, h = config_.hidden_dim;
  auto fill_uniform = [&](size_t index, double bound) {
    const ParameterBlock& b = blocks_[index];
    for (size_t k = 0; k < b.size(); ++k) {
      parameters_[b.offset + k] = static_cast<Scalar>((2 * stream.uniform53() - 1) * bound);
    }
  };
  fill_uniform(kEmbedding, 1 / std::sqrt(e));
  fill_uniform(kLstmWeight, 1 / std::sqrt(e + h));
  fill_uniform(kOutputWeight, 1 / std::sqrt(h));
  // Forget-gate bias 1 (remember by default); other biases 0.
  block(kLstmBias).middleRows(config_.hidden_dim, config_.hidden_dim).setOnes();
}

template <typename Scalar>
void LanguageModelT<Scalar>::build_blocks() {
  const Index V = config_.vocab_size, E = config_.embedding_dim, H = config_.hidden_dim;
  blocks_.clear();
  size_t offset = 0;
  auto add = [&](const char* name, Index rows, Index cols) {
    blocks_.push_back({name, offset, rows, cols});
    offset += static_cast<size_t>(rows * cols);
  };
  add("embedding", E, V);
  add("lstm_weight", 4 * H, E + H);
  add("lstm_bias", 4 * H, 1);
  add("output_weight", V, H);
  add("output_bias", V, 1);
  parameters_.assign(offset, Scalar(0));
}

template <typename Scalar>
typename LanguageModelT<Scalar>::MatrixMap LanguageModelT<Scalar>::view(Scalar* base,
                                                                        size_t index) const {
  const ParameterBlock& b = blocks_.at(index);
  return MatrixMap(base + b.offset, b.rows, b.cols);
}

template <typename Scalar>
typename LanguageModelT<Scalar>::ConstMatrixMap LanguageModelT<Scalar>::cview(const Scalar* base,
                                                                              size_t index) const {
  const ParameterBlock& b = blocks_.at(index);
  return ConstMatrixMap(base + b.offset, b.rows, b.cols);
}

template <typename Scalar>
void LanguageModelT<Scalar>::forward(const ExampleBatch& batch, bool keep_for_backward,
                                     BatchGradientStats* stats) {
  const Index V = config_.vocab_size, E = config_.embedding_dim, H = config_.hidden_dim;
  const size_t B = batch.size();

  // --- layout: sort by number of predictions, longest first ---------------
  std::vector<Index> predictions(B);
  for (size_t k = 0; k < B; ++k) {
    if (batch[k] == nullptr) throw std::invalid_argument("LanguageModel: null example");
    for (int32_t token : *batch[k]) {
      if (token < 0 || token >= config_.vocab_size) {
        throw std::invalid_argument("LanguageModel: token id outside the vocabulary");
      }
    }
    predictions[k] = batch[k]->size() < 2 ? 0 : static_cast<Index>(batch[k]->size() - 1);
  }
  order_.resize(B);
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return predictions[a] > predictions[b]; });
  steps_.resize(B);
  example_start_.resize(B);
  columns_ = 0;
  for (size_t j = 0; j < B; ++j) {
    steps_[j] = predictions[order_[j]];
    example_start_[j] = columns_;
    columns_ += steps_[j];
  }
  const Index max_steps = B == 0 ? 0 : steps_[0];
  active_.assign(static_cast<size_t>(max_steps), 0);
  time_offset_.assign(static_cast<size_t>(max_steps), 0);
  {
    size_t n = B;
    Index offset = 0;
    for (Index t = 0; t < max_steps; ++t) {
      while (n > 0 && steps_[n - 1] <= t) --n;
      active_[static_cast<size_t>(t)] = static_cast<Index>(n);
      time_offset_[static_cast<size_t>(t)] = offset;
      offset += static_cast<Index>(n);
    }
  }
  const Index N = columns_;
  input_tm_.resize(static_cast<size_t>(N));
  target_em_.resize(static_cast<size_t>(N));
  for (size_t j = 0; j < B; ++j) {
    const Example& ex = *batch[order_[j]];
    for (Index t = 0; t < steps_[j]; ++t) {
      input_tm_[static_cast<size_t>(time_offset_[static_cast<size_t>(t)]) + j] =
          ex[static_cast<size_t>(t)];
      target_em_[static_cast<size_t>(example_start_[j] + t)] = ex[static_cast<size_t>(t) + 1];
    }
  }

  stats->losses.assign(B, 0.0);
  stats->predictions = static_cast<size_t>(N);
  if (N == 0) return;

  // --- LSTM ------------------------------------------------------------------
  auto U = inputs_.map(E + H, N);
  auto G = gates_.map(4 * H, N);
  auto C = cells_.map(H, N);
  auto TC = tanh_cells_.map(H, N);
  auto Hx = hidden_.map(H, N);
  auto step = step_a_.map(H, static_cast<Index>(B));
  const ConstMatrixMap emb = cview(parameters_.data(), kEmbedding);
  const ConstMatrixMap W = cview(parameters_.data(), kLstmWeight);
  const ConstMatrixMap b = cview(parameters_.data(), kLstmBias);
  for (Index c = 0; c < N; ++c) U.col(c).head(E) = emb.col(input_tm_[static_cast<size_t>(c)]);
  // Input projection of every token in one GEMM; the recurrent part per step.
  G.noalias() = W.leftCols(E) * U.topRows(E);
  for (Index t = 0; t < max_steps; ++t) {
    const Index n = active_[static_cast<size_t>(t)];
    const Index off = time_offset_[static_cast<size_t>(t)];
    auto Gt = G.middleCols(off, n);
    if (t == 0) {
      U.bottomRows(H).middleCols(off, n).setZero();
    } else {
      Gt.noalias() += W.rightCols(H) * U.bottomRows(H).middleCols(off, n);
    }
    Gt.colwise() += b.col(0);
    Gt.topRows(2 * H).array() = Gt.topRows(2 * H).array().logistic();          // i, f
    Gt.middleRows(2 * H, H).array() = Gt.middleRows(2 * H, H).array().tanh();  // g
    Gt.bottomRows(H).array() = Gt.bottomRows(H).array().logistic();            // o
    auto c = C.middleCols(off, n);
    c.array() = Gt.topRows(H).array() * Gt.middleRows(2 * H, H).array();
    if (t > 0) {
      c.array() += Gt.middleRows(H, H).array() *
                   C.middleCols(time_offset_[static_cast<size_t>(t - 1)], n).array();
    }
    auto tc = TC.middleCols(off, n);
    tc.array() = c.array().tanh();
    auto h = step.leftCols(n);
    h.array() = Gt.bottomRows(H).array() * tc.array();
    const Index next = t + 1 < max_steps ? active_[static_cast<size_t>(t + 1)] : 0;
    if (next > 0) {
      U.bottomRows(H).middleCols(time_offset_[static_cast<size_t>(t + 1)], next) = h.leftCols(next);
    }
    for (Index j = 0; j < n; ++j) Hx.col(example_start_[static_cast<size_t>(j)] + t) = h.col(j);
  }

  // --- output layer and loss (example-major) ---------------------------------
  auto Z = logits_.map(V, N);
  const ConstMatrixMap Wo = cview(parameters_.data(), kOutputWeight);
  const ConstMatrixMap bo = cview(parameters_.data(), kOutputBias);
  Z.noalias() = Wo * Hx;
  for (size_t j = 0; j < B; ++j) {
    const Index T = steps_[j];
    double total = 0;
    for (Index t = 0; t < T; ++t) {
      const Index col = example_start_[j] + t;
      const int32_t y = target_em_[static_cast<size_t>(col)];
      auto z = Z.col(col);
      z += bo.col(0);
      const Scalar m = z.maxCoeff();
      const Scalar zy = z(y);
      z.array() = (z.array() - m).exp();
      const Scalar sum = z.sum();
      total += std::log(static_cast<double>(sum)) + static_cast<double>(m - zy);
      if (keep_for_backward) {
        // dloss/dz = (softmax - onehot) / T for the mean loss.
        z *= Scalar(1) / (sum * static_cast<Scalar>(T));
        z(y) -= Scalar(1) / static_cast<Scalar>(T);
      }
    }
    if (T > 0) stats->losses[order_[j]] = total / static_cast<double>(T);
  }
}

template <typename Scalar>
std::vector<double> LanguageModelT<Scalar>::losses(const ExampleBatch& batch) {
  BatchGradientStats stats;
  forward(batch, false, &stats);
  return stats.losses;
}

template <typename Scalar>
BatchGradientStats LanguageModelT<Scalar>::accumulate_gradient(const ExampleBatch& batch,
                                                               const GradientOptions& options,
                                                               Scalar* gradient) {
  if (!(options.clip_norm > 0)) {
    throw std::invalid_argument("LanguageModel: clip norm must be positive (or infinite)");
  }
  const bool clipping = std::isfinite(options.clip_norm);
  const bool want_norms = clipping || options.compute_norms;
  BatchGradientStats stats;
  forward(batch, true, &stats);
  const size_t B = batch.size();
  stats.clip_factors.assign(B, 1.0);
  if (want_norms) stats.norms.assign(B, 0.0);
  const Index N = columns_;
  if (N == 0) {
    if (options.before_write) options.before_write();
    return stats;
  }

  const Index V = config_.vocab_size, E = config_.embedding_dim, H = config_.hidden_dim;
  auto U = inputs_.map(E + H, N);
  auto G = gates_.map(4 * H, N);
  auto C = cells_.map(H, N);
  auto TC = tanh_cells_.map(H, N);
  auto Hx = hidden_.map(H, N);
  auto Z = logits_.map(V, N);  // now dloss/dlogits
  const ConstMatrixMap W = cview(parameters_.data(), kLstmWeight);
  const ConstMatrixMap Wo = cview(parameters_.data(), kOutputWeight);

  // --- backward through the output layer and time -----------------------------
  auto dHx = hidden_grad_.map(H, N);
  dHx.noalias() = Wo.transpose() * Z;
  auto carry_h = carry_h_.map(H, static_cast<Index>(B));
  auto carry_c = carry_c_.map(H, static_cast<Index>(B));
  auto dh_buf = step_a_.map(H, static_cast<Index>(B));
  auto dc_buf = step_b_.map(H, static_cast<Index>(B));
  const Index max_steps = steps_[0];
  for (Index t = max_steps - 1; t >= 0; --t) {
    const Index n = active_[static_cast<size_t>(t)];
    const Index off = time_offset_[static_cast<size_t>(t)];
    const Index later = t + 1 < max_steps ? active_[static_cast<size_t>(t + 1)] : 0;
    auto dh = dh_buf.leftCols(n);
    for (Index j = 0; j < n; ++j) dh.col(j) = dHx.col(example_start_[static_cast<size_t>(j)] + t);
    if (later > 0) dh.leftCols(later) += carry_h.leftCols(later);
    auto Gt = G.middleCols(off, n);
    auto gi = Gt.topRows(H).array();
    auto gf = Gt.middleRows(H, H).array();
    auto gg = Gt.middleRows(2 * H, H).array();
    auto go = Gt.bottomRows(H).array();
    auto tc = TC.middleCols(off, n).array();
    auto dc = dc_buf.leftCols(n);
    dc.array() = dh.array() * go * (Scalar(1) - tc.square());
    if (later > 0) dc.leftCols(later) += carry_c.leftCols(later);
    // Overwrite each gate's activation with its pre-activation gradient,
    // reading every value before it is overwritten.
    go = dh.array() * tc * go * (Scalar(1) - go);
    carry_c.leftCols(n).array() = dc.array() * gf;
    if (t > 0) {
      gf = dc.array() * C.middleCols(time_offset_[static_cast<size_t>(t - 1)], n).array() * gf *
           (Scalar(1) - gf);
    } else {
      gf.setZero();
    }
    dh.array() = dc.array() * gg * gi * (Scalar(1) - gi);  // d a_i (dh is no longer needed)
    gg = dc.array() * gi * (Scalar(1) - gg.square());
    gi = dh.array();
    if (t > 0) carry_h.leftCols(n).noalias() = W.rightCols(H).transpose() * Gt;
  }
  (void)C;
  auto dX = input_grad_.map(E, N);
  dX.noalias() = W.leftCols(E).transpose() * G;

  // --- exact per-example norms (ghost / book-keeping) -------------------------
  auto w_em = weight_em_.map(N, 1);
  auto w_tm = weight_tm_.map(N, 1);
  w_em.setOnes();
  w_tm.setOnes();
  bool any_clipped = false;
  if (want_norms) {
    using MatrixD = Eigen::MatrixXd;
    for (size_t j = 0; j < B; ++j) {
      const Index T = steps_[j];
      if (T == 0) continue;
      const Index start = example_start_[j];
      // Output layer: d_t = dz_t, u_t = [h_t; 1].
      auto a = gram_a_.map(V, T);
      a = Z.middleCols(start, T).template cast<double>();
      MatrixD gd = a.transpose() * a;
      auto u = gram_b_.map(E + H, T);
      u.topRows(H) = Hx.middleCols(start, T).template cast<double>();
      MatrixD gu = u.topRows(H).transpose() * u.topRows(H);
      double total = (gd.array() * (gu.array() + 1.0)).sum();
      // LSTM layer: d_t = da_t, u_t = [x_t; h_{t-1}; 1].
      auto d = gram_a_.map(4 * H, T);
      auto x = gram_c_.map(E, T);
      for (Index t = 0; t < T; ++t) {
        const Index col = time_offset_[static_cast<size_t>(t)] + static_cast<Index>(j);
        d.col(t) = G.col(col).template cast<double>();
        u.col(t) = U.col(col).template cast<double>();
        x.col(t) = dX.col(col).template cast<double>();
      }
      gd.noalias() = d.transpose() * d;
      gu.noalias() = u.transpose() * u;
      total += (gd.array() * (gu.array() + 1.0)).sum();
      // Embedding: one-hot inputs, u_t . u_s = [w_t == w_s].
      gd.noalias() = x.transpose() * x;
      const Example& ex = *batch[order_[j]];
      for (Index t = 0; t < T; ++t) {
        for (Index s = 0; s < T; ++s) {
          if (ex[static_cast<size_t>(t)] == ex[static_cast<size_t>(s)]) total += gd(t, s);
        }
      }
      const double norm = std::sqrt(std::max(total, 0.0));
      stats.norms[order_[j]] = norm;
      if (clipping && norm > options.clip_norm) {
        const double factor = options.clip_norm / norm;
        stats.clip_factors[order_[j]] = factor;
        any_clipped = true;
        const auto f = static_cast<Scalar>(factor);
        w_em.middleRows(start, T).setConstant(f);
        for (Index t = 0; t < T; ++t) {
          w_tm(time_offset_[static_cast<size_t>(t)] + static_cast<Index>(j)) = f;
        }
      }
    }
  }

  // --- the (clipped) sum: ordinary batch GEMMs with weighted input columns ----
  if (any_clipped) {
    Hx = Hx * w_em.asDiagonal();
    U = U * w_tm.asDiagonal();
    dX = dX * w_tm.asDiagonal();
  }
  if (options.before_write) options.before_write();
  view(gradient, kOutputWeight).noalias() += Z * Hx.transpose();
  view(gradient, kOutputBias).noalias() += Z * w_em;
  view(gradient, kLstmWeight).noalias() += G * U.transpose();
  view(gradient, kLstmBias).noalias() += G * w_tm;
  auto dEmb = view(gradient, kEmbedding);
  for (Index c = 0; c < N; ++c) dEmb.col(input_tm_[static_cast<size_t>(c)]) += dX.col(c);
  return stats;
}

template class LanguageModelT<float>;
template class LanguageModelT<double>;

}  // namespace blur::collector
