#include "trainer/model/language_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "trainer/model/gram_matrix.h"
#include "trainer/model/parallel.h"
#include "trainer/model/softmax_cross_entropy.h"

namespace blur::trainer {

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
size_t LanguageModelT<Scalar>::split(const ExampleBatch& batch) {
  for (const Example* example : batch) {
    if (example == nullptr) throw std::invalid_argument("LanguageModel: null example");
    for (int32_t token : *example) {
      if (token < 0 || token >= config_.vocab_size) {
        throw std::invalid_argument("LanguageModel: token id outside the vocabulary");
      }
    }
  }
  const size_t shares = std::max<size_t>(1, std::min(batch.size(), worker_threads()));
  if (workspaces_.size() < shares) workspaces_.resize(shares);
  const size_t size = (batch.size() + shares - 1) / shares;
  for (size_t t = 0; t < shares; ++t) {
    const size_t begin = std::min(batch.size(), size * t);
    const size_t end = std::min(batch.size(), size * (t + 1));
    workspaces_[t].examples.assign(batch.begin() + static_cast<std::ptrdiff_t>(begin),
                                   batch.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return shares;
}

template <typename Scalar>
void LanguageModelT<Scalar>::forward(Workspace& w, bool keep_for_backward, bool output_norms,
                                     double* losses) {
  const Index V = config_.vocab_size, E = config_.embedding_dim, H = config_.hidden_dim;
  const ExampleBatch& batch = w.examples;
  const size_t B = batch.size();

  // --- layout: sort by number of predictions, longest first ---------------
  std::vector<Index> predictions(B);
  for (size_t k = 0; k < B; ++k) {
    predictions[k] = batch[k]->size() < 2 ? 0 : static_cast<Index>(batch[k]->size() - 1);
  }
  w.order.resize(B);
  std::iota(w.order.begin(), w.order.end(), size_t{0});
  std::stable_sort(w.order.begin(), w.order.end(),
                   [&](size_t a, size_t b) { return predictions[a] > predictions[b]; });
  w.steps.resize(B);
  w.example_start.resize(B);
  w.columns = 0;
  for (size_t j = 0; j < B; ++j) {
    w.steps[j] = predictions[w.order[j]];
    w.example_start[j] = w.columns;
    w.columns += w.steps[j];
  }
  const Index max_steps = B == 0 ? 0 : w.steps[0];
  w.active.assign(static_cast<size_t>(max_steps), 0);
  w.time_offset.assign(static_cast<size_t>(max_steps), 0);
  {
    size_t n = B;
    Index offset = 0;
    for (Index t = 0; t < max_steps; ++t) {
      while (n > 0 && w.steps[n - 1] <= t) --n;
      w.active[static_cast<size_t>(t)] = static_cast<Index>(n);
      w.time_offset[static_cast<size_t>(t)] = offset;
      offset += static_cast<Index>(n);
    }
  }
  const Index N = w.columns;
  w.input_tm.resize(static_cast<size_t>(N));
  w.target_em.resize(static_cast<size_t>(N));
  for (size_t j = 0; j < B; ++j) {
    const Example& ex = *batch[w.order[j]];
    for (Index t = 0; t < w.steps[j]; ++t) {
      w.input_tm[static_cast<size_t>(w.time_offset[static_cast<size_t>(t)]) + j] =
          ex[static_cast<size_t>(t)];
      w.target_em[static_cast<size_t>(w.example_start[j] + t)] = ex[static_cast<size_t>(t) + 1];
    }
  }

  std::fill(losses, losses + B, 0.0);
  w.output_norm2.assign(B, 0.0);
  if (N == 0) return;

  // --- LSTM ------------------------------------------------------------------
  auto U = w.inputs.map(E + H, N);
  auto G = w.gates.map(4 * H, N);
  auto C = w.cells.map(H, N);
  auto TC = w.tanh_cells.map(H, N);
  auto Hx = w.hidden.map(H, N);
  auto step = w.step_a.map(H, static_cast<Index>(B));
  const ConstMatrixMap emb = cview(parameters_.data(), kEmbedding);
  const ConstMatrixMap W = cview(parameters_.data(), kLstmWeight);
  const ConstMatrixMap b = cview(parameters_.data(), kLstmBias);
  for (Index c = 0; c < N; ++c) U.col(c).head(E) = emb.col(w.input_tm[static_cast<size_t>(c)]);
  // Input projection of every token in one GEMM; the recurrent part per step.
  G.noalias() = W.leftCols(E) * U.topRows(E);
  for (Index t = 0; t < max_steps; ++t) {
    const Index n = w.active[static_cast<size_t>(t)];
    const Index off = w.time_offset[static_cast<size_t>(t)];
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
                   C.middleCols(w.time_offset[static_cast<size_t>(t - 1)], n).array();
    }
    auto tc = TC.middleCols(off, n);
    tc.array() = c.array().tanh();
    auto h = step.leftCols(n);
    h.array() = Gt.bottomRows(H).array() * tc.array();
    const Index next = t + 1 < max_steps ? w.active[static_cast<size_t>(t + 1)] : 0;
    if (next > 0) {
      U.bottomRows(H).middleCols(w.time_offset[static_cast<size_t>(t + 1)], next) =
          h.leftCols(next);
    }
    for (Index j = 0; j < n; ++j) Hx.col(w.example_start[static_cast<size_t>(j)] + t) = h.col(j);
  }

  // --- output layer and loss (example-major) ---------------------------------
  auto Z = w.logits.map(V, N);
  const ConstMatrixMap Wo = cview(parameters_.data(), kOutputWeight);
  const ConstMatrixMap bo = cview(parameters_.data(), kOutputBias);
  Z.noalias() = Wo * Hx;
  for (size_t j = 0; j < B; ++j) {
    const Index T = w.steps[j];
    double total = 0;
    for (Index t = 0; t < T; ++t) {
      const Index col = w.example_start[j] + t;
      // With keep_for_backward, z becomes dloss/dz = (softmax - onehot) / T.
      total += softmax_cross_entropy(Z.col(col).data(), bo.data(), static_cast<int32_t>(V),
                                     w.target_em[static_cast<size_t>(col)],
                                     static_cast<Scalar>(T), keep_for_backward);
    }
    if (T > 0) losses[w.order[j]] = total / static_cast<double>(T);
    // The output layer's part of the example's squared gradient norm, while
    // its T columns of dloss/dz (V floats each) are still in cache.
    if (output_norms && T > 0) w.output_norm2[j] = output_layer_norm2(w, j);
  }
}

template <typename Scalar>
std::vector<double> LanguageModelT<Scalar>::losses(const ExampleBatch& batch) {
  const size_t shares = split(batch);
  std::vector<double> out(batch.size(), 0.0);
  const size_t size = shares == 0 ? 0 : (batch.size() + shares - 1) / shares;
  parallel_items(shares, [&](size_t first, size_t last) {
    for (size_t t = first; t < last; ++t) forward(workspaces_[t], false, false, out.data() + size * t);
  });
  return out;
}

namespace {

// The lower triangle of the T x T Gram matrix of a rows x T block
// (gram_matrix.h: in the model's precision, lanes added in double).
template <typename Scalar>
void gram(std::vector<double>& g, const Scalar* x, Index rows, Index T, Index ld) {
  g.resize(static_cast<size_t>(T * T));
  gram_lower(x, rows, T, ld, g.data());
}

// sum_{s,t} d(s,t) (u(s,t) + 1) over the lower triangles, in double
// (off-diagonal terms twice): a layer's weight and bias together.
double gram_sum(const std::vector<double>& d, const std::vector<double>& u, Index T) {
  double sum = 0;
  for (Index s = 0; s < T; ++s) {
    const auto diagonal = static_cast<size_t>(s + s * T);
    sum += d[diagonal] * (u[diagonal] + 1.0);
    for (Index t = s + 1; t < T; ++t) {
      const auto k = static_cast<size_t>(t + s * T);
      sum += 2.0 * d[k] * (u[k] + 1.0);
    }
  }
  return sum;
}

}  // namespace

// Output layer: d_t = dz_t, u_t = [h_t; 1] (example-major: contiguous).
template <typename Scalar>
double LanguageModelT<Scalar>::output_layer_norm2(Workspace& w, size_t j) const {
  const Index V = config_.vocab_size, H = config_.hidden_dim;
  const Index T = w.steps[j], start = w.example_start[j];
  gram(w.gram_d, w.logits.data.data() + start * V, V, T, V);
  gram(w.gram_u, w.hidden.data.data() + start * H, H, T, H);
  return gram_sum(w.gram_d, w.gram_u, T);
}

template <typename Scalar>
void LanguageModelT<Scalar>::backward(Workspace& w, const GradientOptions& options, double* norms,
                                      double* clip_factors) {
  const bool clipping = std::isfinite(options.clip_norm);
  const bool want_norms = clipping || options.compute_norms;
  const ExampleBatch& batch = w.examples;
  const size_t B = batch.size();
  std::fill(clip_factors, clip_factors + B, 1.0);
  if (want_norms) std::fill(norms, norms + B, 0.0);
  w.any_clipped = false;
  const Index N = w.columns;
  if (N == 0) return;

  const Index V = config_.vocab_size, E = config_.embedding_dim, H = config_.hidden_dim;
  auto U = w.inputs.map(E + H, N);
  auto G = w.gates.map(4 * H, N);
  auto C = w.cells.map(H, N);
  auto TC = w.tanh_cells.map(H, N);
  auto Hx = w.hidden.map(H, N);
  auto Z = w.logits.map(V, N);  // now dloss/dlogits
  const ConstMatrixMap W = cview(parameters_.data(), kLstmWeight);
  const ConstMatrixMap Wo = cview(parameters_.data(), kOutputWeight);

  // --- backward through the output layer and time -----------------------------
  auto dHx = w.hidden_grad.map(H, N);
  dHx.noalias() = Wo.transpose() * Z;
  auto carry_h = w.carry_h.map(H, static_cast<Index>(B));
  auto carry_c = w.carry_c.map(H, static_cast<Index>(B));
  auto dh_buf = w.step_a.map(H, static_cast<Index>(B));
  auto dc_buf = w.step_b.map(H, static_cast<Index>(B));
  const Index max_steps = w.steps[0];
  for (Index t = max_steps - 1; t >= 0; --t) {
    const Index n = w.active[static_cast<size_t>(t)];
    const Index off = w.time_offset[static_cast<size_t>(t)];
    const Index later = t + 1 < max_steps ? w.active[static_cast<size_t>(t + 1)] : 0;
    auto dh = dh_buf.leftCols(n);
    for (Index j = 0; j < n; ++j) {
      dh.col(j) = dHx.col(w.example_start[static_cast<size_t>(j)] + t);
    }
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
      gf = dc.array() * C.middleCols(w.time_offset[static_cast<size_t>(t - 1)], n).array() * gf *
           (Scalar(1) - gf);
    } else {
      gf.setZero();
    }
    dh.array() = dc.array() * gg * gi * (Scalar(1) - gi);  // d a_i (dh is no longer needed)
    gg = dc.array() * gi * (Scalar(1) - gg.square());
    gi = dh.array();
    if (t > 0) carry_h.leftCols(n).noalias() = W.rightCols(H).transpose() * Gt;
  }
  auto dX = w.input_grad.map(E, N);
  dX.noalias() = W.leftCols(E).transpose() * G;

  // --- exact per-example norms (ghost / book-keeping) -------------------------
  auto w_em = w.weight_em.map(N, 1);
  auto w_tm = w.weight_tm.map(N, 1);
  w_em.setOnes();
  w_tm.setOnes();
  if (!want_norms) return;
  std::vector<double>& gd = w.gram_d;
  std::vector<double>& gu = w.gram_u;
  for (size_t j = 0; j < B; ++j) {
    const Index T = w.steps[j];
    if (T == 0) continue;
    const Index start = w.example_start[j];
    // forward()'s output-layer term (output weight and bias).
    double total = (options.norm_groups & kOutputGroup) ? w.output_norm2[j] : 0.0;
    // LSTM layer: d_t = da_t, u_t = [x_t; h_{t-1}; 1] (time-major: gathered).
    w.gather_d.resize(4 * H, T);
    w.gather_u.resize(E + H, T);
    w.gather_x.resize(E, T);
    for (Index t = 0; t < T; ++t) {
      const Index col = w.time_offset[static_cast<size_t>(t)] + static_cast<Index>(j);
      w.gather_d.col(t) = G.col(col);
      w.gather_u.col(t) = U.col(col);
      w.gather_x.col(t) = dX.col(col);
    }
    if (options.norm_groups & kLstmGroup) {
      gram(gd, w.gather_d.data(), 4 * H, T, 4 * H);
      gram(gu, w.gather_u.data(), E + H, T, E + H);
      total += gram_sum(gd, gu, T);
    }
    // Embedding: one-hot inputs, u_t . u_s = [w_t == w_s].
    if (options.norm_groups & kEmbeddingGroup) {
      gram(gd, w.gather_x.data(), E, T, E);
      const Example& ex = *batch[w.order[j]];
      for (Index s = 0; s < T; ++s) {
        total += gd[static_cast<size_t>(s + s * T)];
        for (Index t = s + 1; t < T; ++t) {
          if (ex[static_cast<size_t>(t)] == ex[static_cast<size_t>(s)]) {
            total += 2.0 * gd[static_cast<size_t>(t + s * T)];
          }
        }
      }
    }
    const double norm = std::isfinite(total) ? std::sqrt(std::max(total, 0.0)) : total;
    norms[w.order[j]] = norm;
    if (clipping && !std::isfinite(norm)) {
      // A NaN or infinite norm (an overflow in this example's forward or
      // backward pass) must not slip past the clip: the example contributes
      // nothing. Its columns are zeroed everywhere they enter the weight
      // GEMMs (0 * NaN would still be NaN), and its factor is 0.
      clip_factors[w.order[j]] = 0;
      w.any_clipped = true;
      w_em.middleRows(start, T).setZero();
      Z.middleCols(start, T).setZero();
      Hx.middleCols(start, T).setZero();
      for (Index t = 0; t < T; ++t) {
        const Index col = w.time_offset[static_cast<size_t>(t)] + static_cast<Index>(j);
        w_tm(col) = 0;
        G.col(col).setZero();
        U.col(col).setZero();
        dX.col(col).setZero();
      }
    } else if (clipping && norm > options.clip_norm) {
      const double factor = options.clip_norm / norm;
      clip_factors[w.order[j]] = factor;
      w.any_clipped = true;
      const auto f = static_cast<Scalar>(factor);
      w_em.middleRows(start, T).setConstant(f);
      for (Index t = 0; t < T; ++t) {
        w_tm(w.time_offset[static_cast<size_t>(t)] + static_cast<Index>(j)) = f;
      }
    }
  }
}

template <typename Scalar>
void LanguageModelT<Scalar>::add_gradient(Workspace& w, Scalar* out, bool overwrite) {
  const Index N = w.columns;
  if (N == 0) {
    if (overwrite) std::fill(out, out + parameters_.size(), Scalar(0));
    return;
  }
  const Index V = config_.vocab_size, E = config_.embedding_dim, H = config_.hidden_dim;
  auto U = w.inputs.map(E + H, N);
  auto G = w.gates.map(4 * H, N);
  auto Hx = w.hidden.map(H, N);
  auto Z = w.logits.map(V, N);
  auto dX = w.input_grad.map(E, N);
  auto w_em = w.weight_em.map(N, 1);
  auto w_tm = w.weight_tm.map(N, 1);
  // The (clipped) sum: ordinary GEMMs with weighted input columns.
  if (w.any_clipped) {
    Hx = Hx * w_em.asDiagonal();
    U = U * w_tm.asDiagonal();
    dX = dX * w_tm.asDiagonal();
  }
  auto dEmb = view(out, kEmbedding);
  if (overwrite) {
    view(out, kOutputWeight).noalias() = Z * Hx.transpose();
    view(out, kOutputBias).noalias() = Z * w_em;
    view(out, kLstmWeight).noalias() = G * U.transpose();
    view(out, kLstmBias).noalias() = G * w_tm;
    dEmb.setZero();
  } else {
    view(out, kOutputWeight).noalias() += Z * Hx.transpose();
    view(out, kOutputBias).noalias() += Z * w_em;
    view(out, kLstmWeight).noalias() += G * U.transpose();
    view(out, kLstmBias).noalias() += G * w_tm;
  }
  for (Index c = 0; c < N; ++c) dEmb.col(w.input_tm[static_cast<size_t>(c)]) += dX.col(c);
}

template <typename Scalar>
BatchGradientStats LanguageModelT<Scalar>::accumulate_gradient(const ExampleBatch& batch,
                                                               const GradientOptions& options,
                                                               Scalar* gradient) {
  if (!(options.clip_norm > 0)) {
    throw std::invalid_argument("LanguageModel: clip norm must be positive (or infinite)");
  }
  const bool want_norms = std::isfinite(options.clip_norm) || options.compute_norms;
  const size_t shares = split(batch);
  const size_t B = batch.size();
  BatchGradientStats stats;
  stats.losses.assign(B, 0.0);
  stats.clip_factors.assign(B, 1.0);
  std::vector<double> norms(B, 0.0);
  const size_t size = shares == 0 ? 0 : (B + shares - 1) / shares;
  const size_t P = parameters_.size();
  // Each share on its own thread: forward, backward, norms and, with more
  // than one share, its gradient sum into its own buffer.
  parallel_items(shares, [&](size_t first, size_t last) {
    for (size_t t = first; t < last; ++t) {
      Workspace& w = workspaces_[t];
      forward(w, true, want_norms, stats.losses.data() + size * t);
      backward(w, options, norms.data() + size * t, stats.clip_factors.data() + size * t);
      if (shares > 1) {
        w.gradient.resize(P);
        add_gradient(w, w.gradient.data(), true);
      }
    }
  });
  for (size_t t = 0; t < shares; ++t) {
    stats.predictions += static_cast<size_t>(workspaces_[t].columns);
  }
  if (want_norms) stats.norms = std::move(norms);
  if (options.before_write) options.before_write();
  if (shares == 1) {
    add_gradient(workspaces_[0], gradient, options.overwrite);
  } else if (shares > 1) {
    // The shares' sums in share order (each parameter on one thread, so the
    // order of additions is fixed; overwriting starts from the first share's
    // sum, which is 0 + it exactly).
    parallel_items(P, [&](size_t first, size_t last) {
      for (size_t t = 0; t < shares; ++t) {
        const Scalar* part = workspaces_[t].gradient.data();
        if (t == 0 && options.overwrite) {
          std::copy(part + first, part + last, gradient + first);
        } else {
          for (size_t k = first; k < last; ++k) gradient[k] += part[k];
        }
      }
    });
  }
  return stats;
}

template class LanguageModelT<float>;
template class LanguageModelT<double>;

}  // namespace blur::trainer
