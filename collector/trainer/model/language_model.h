// A word-level LSTM next-word model with exact, cheap per-example gradient
// norms for DP-SGD (dp_sgd.h).
//
// Model (one example = token ids w_0 .. w_L; it predicts w_{t+1} from
// w_0..w_t, so it has T = L predictions; examples with fewer than two
// tokens have none and contribute nothing):
//   x_t = E[:, w_t]                               embedding, d_e
//   a_t = W [x_t; h_{t-1}] + b                    W = [W_x W_h], 4H x (d_e + H)
//   i, f, o = sigmoid(a_i, a_f, a_o), g = tanh(a_g)   (gate rows in that order)
//   c_t = f * c_{t-1} + i * g,  h_t = o * tanh(c_t),  h_{-1} = c_{-1} = 0
//   z_t = W_o h_t + b_o,  p_t = softmax(z_t)      V-way softmax
//   loss = (1/T) sum_t -log p_t[w_{t+1}]          MEAN over the example's predictions
// The per-example loss is a mean, so an example's gradient does not grow
// with its length and one clipping norm C suits short and long examples;
// DP-SGD clips the gradient of exactly this per-example loss. The input
// embedding and the output softmax are separate (untied) parameters.
//
// Why Eigen + OpenBLAS: the work is a handful of dense GEMMs (V x H output
// layer, 4H x (d_e + H) LSTM layer) plus elementwise gate math. Eigen is
// header-only and in Debian, expresses the whole model once for float
// (training) and double (the finite-difference tests), and vectorizes the
// softmax and gates; with EIGEN_USE_BLAS its products run in OpenBLAS,
// whose kernels are chosen for the CPU at run time (AVX2/FMA here, where
// Eigen's own would be compiled for the x86-64 baseline). The batch is
// split over worker threads (parallel.h), each with single-threaded GEMMs.
//
// Batching: the examples of a batch are sorted by length (longest first);
// at time step t the n_t examples still running are the first n_t, so a
// step works on contiguous column blocks (packed sequences, no padding and
// no masks). LSTM tensors are time-major (column off_t + j for example j
// at step t); the output layer is example-major (column start_j + t), so
// each example's logits are one contiguous block.
//
// Exact per-example gradient norms without per-example gradients
// ("ghost norm", book-keeping): a linear layer y_t = M u_t used at T
// positions has per-example gradient G = sum_t d_t u_t^T (d_t = dL/dy_t),
// and
//   ||G||_F^2 = sum_{t,s} (d_t . d_s)(u_t . u_s),
// two T x T Gram matrices (cost T^2 (rows + cols)) instead of a rows x
// cols matrix per example (cost T rows cols): cheaper whenever
// T < rows cols / (rows + cols) (187 for the 8000 x 192 output layer, 85 for
// a 768 x 96 input block). A bias is an input fixed at 1 (u_t . u_s = 1).
// The embedding is a linear layer on one-hot inputs, so u_t . u_s =
// [w_t == w_s]: its per-example gradient touches only the example's rows,
// and a token repeated in the example has its contributions summed before
// the norm is taken. All blocks add up to the norm over ALL parameters
// jointly. The Gram matrices are products in the model's precision
// (gram_matrix.h); their elementwise products are summed in double. The
// output layer's (T columns of V rows, most of the norms' work) is taken in
// the forward pass, right after the softmax has written the example's
// dloss/dz, while those columns are still in cache.
//
// The clipped sum sum_j c_j g_j then costs nothing extra: every backward
// quantity of example j is linear in its loss, so scaling example j's
// columns (of the layer inputs; the activation gradients are left as they
// are) by c_j inside the ordinary batch weight-gradient GEMMs gives it.
// Non-private training runs the same code with c_j = 1 and no norms.
#ifndef BLUR_TRAINER_MODEL_LANGUAGE_MODEL_H
#define BLUR_TRAINER_MODEL_LANGUAGE_MODEL_H

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

struct LanguageModelConfig {
  int32_t vocab_size = 8000;
  int32_t embedding_dim = 96;
  int32_t hidden_dim = 192;

  bool operator==(const LanguageModelConfig& o) const {
    return vocab_size == o.vocab_size && embedding_dim == o.embedding_dim &&
           hidden_dim == o.hidden_dim;
  }
};

// One contiguous block of the flat parameter vector, column-major.
struct ParameterBlock {
  std::string name;
  size_t offset;
  Eigen::Index rows;
  Eigen::Index cols;
  size_t size() const { return static_cast<size_t>(rows * cols); }
};

using Example = std::vector<int32_t>;
// A batch refers to examples owned elsewhere (the corpus).
using ExampleBatch = std::vector<const Example*>;

// The parameter blocks by layer, each with its own term in the per-example
// norm: fine-tuning may train a subset of them (DpSgdConfig::trained_groups).
enum ParameterGroup : uint32_t {
  kEmbeddingGroup = 1,  // embedding
  kLstmGroup = 2,       // lstm_weight, lstm_bias
  kOutputGroup = 4,     // output_weight, output_bias
  kAllGroups = 7,
};

struct GradientOptions {
  // Per-example clipping norm C over all parameters jointly; +infinity
  // disables clipping (and, unless compute_norms, the norm computation).
  double clip_norm = std::numeric_limits<double>::infinity();
  bool compute_norms = false;
  // Write the sum to `gradient` instead of adding it (the buffer need not
  // be zeroed first: one pass over the parameters fewer).
  bool overwrite = false;
  // The groups the norms (and so the clipping) cover: with fewer than all,
  // the clipped sum is bounded by C over those groups' coordinates only,
  // and the other groups' entries of `gradient` must not be released.
  uint32_t norm_groups = kAllGroups;
  // If set, called once right before `gradient` is first written (after
  // the forward and backward passes and the norms), or at the end if it is
  // never written.
  std::function<void()> before_write;
};

struct BatchGradientStats {
  std::vector<double> losses;        // per example (batch order), mean over its predictions
  std::vector<double> norms;         // per example ||g_j||; empty if not computed
  // Per example min(1, C/||g_j||); 0 when clipping and ||g_j|| is NaN or
  // infinite (the example then contributes exactly nothing); all 1
  // without clipping.
  std::vector<double> clip_factors;
  size_t predictions = 0;            // tokens predicted in the batch
};

template <typename Scalar>
class LanguageModelT {
 public:
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  using MatrixMap = Eigen::Map<Matrix>;
  using ConstMatrixMap = Eigen::Map<const Matrix>;

  // Throws std::invalid_argument for non-positive sizes. Initialization is
  // a deterministic function of (config, seed) (DrbgStream "init"):
  // embedding and weights uniform in +-1/sqrt(fan_in), LSTM bias 0 except
  // the forget gate's 1, output bias 0.
  LanguageModelT(const LanguageModelConfig& config, const TrainSeed& seed);
  // Zero parameters (to be filled, e.g. by a checkpoint).
  explicit LanguageModelT(const LanguageModelConfig& config);

  const LanguageModelConfig& config() const { return config_; }
  size_t parameter_count() const { return parameters_.size(); }
  // Flat parameters; order: embedding (d_e x V, column = token),
  // lstm_weight (4H x (d_e + H)), lstm_bias (4H), output_weight (V x H),
  // output_bias (V).
  Scalar* parameters() { return parameters_.data(); }
  const Scalar* parameters() const { return parameters_.data(); }
  const std::vector<ParameterBlock>& blocks() const { return blocks_; }

  MatrixMap block(size_t index) { return view(parameters_.data(), index); }
  ConstMatrixMap block(size_t index) const { return cview(parameters_.data(), index); }
  static constexpr size_t kEmbedding = 0, kLstmWeight = 1, kLstmBias = 2, kOutputWeight = 3,
                          kOutputBias = 4;
  // The group of block `index` (blocks are ordered by group).
  static ParameterGroup group_of_block(size_t index) {
    return index == kEmbedding ? kEmbeddingGroup : index <= kLstmBias ? kLstmGroup : kOutputGroup;
  }

  // Per-example mean losses (batch order). Throws std::invalid_argument for
  // a token outside [0, V).
  std::vector<double> losses(const ExampleBatch& batch);

  // ADDS sum_j c_j grad(loss_j) to gradient[0 .. parameter_count()) (or
  // writes it there, options.overwrite), with
  // c_j = min(1, C/||grad(loss_j)||) (exact per-example norms over all
  // parameters, see above) or c_j = 1 without clipping. The caller zeroes
  // the buffer (or pre-fills it), unless overwrite. Uses one thread per core and
  // scratch buffers owned by the model: not thread-safe.
  BatchGradientStats accumulate_gradient(const ExampleBatch& batch, const GradientOptions& options,
                                         Scalar* gradient);

 private:
  // Scratch that only grows, so steady-state steps do not allocate.
  template <typename T>
  struct BufferT {
    std::vector<T> data;
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>> map(Eigen::Index rows,
                                                                     Eigen::Index cols) {
      // A quarter to spare: Poisson batch sizes vary from step to step, and
      // each growth would zero-fill and fault in the whole buffer again.
      const auto needed = static_cast<size_t>(rows * cols);
      if (data.size() < needed) data.resize(needed + needed / 4);
      return {data.data(), rows, cols};
    }
  };
  using Buffer = BufferT<Scalar>;

  // One thread's share of a batch: its layout and activations. The batch
  // is split into one contiguous share per core (parallel.h); each share
  // runs forward, backward and its norms on its own thread with
  // single-threaded GEMMs, and the shares' gradients are added in share
  // order, so a result depends on the core count but not on timing.
  struct Workspace {
    ExampleBatch examples;                    // the share, in batch order
    std::vector<size_t> order;                // sorted position -> share index
    std::vector<Eigen::Index> steps;          // T_j per sorted example
    std::vector<Eigen::Index> active;         // n_t per time step
    std::vector<Eigen::Index> time_offset;    // off_t
    std::vector<Eigen::Index> example_start;  // start_j
    std::vector<int32_t> input_tm;            // input token per time-major column
    std::vector<int32_t> target_em;           // target token per example-major column
    Eigen::Index columns = 0;                 // N = sum_j T_j

    Buffer inputs;       // (d_e + H) x N, time-major: [x_t; h_{t-1}]
    Buffer gates;        // 4H x N, time-major: activated gates, then their pre-activation gradients
    Buffer cells;        // H x N, time-major: c_t
    Buffer tanh_cells;   // H x N, time-major: tanh(c_t)
    Buffer hidden;       // H x N, example-major: h_t
    Buffer logits;       // V x N, example-major: logits, then dloss/dlogits
    Buffer hidden_grad;  // H x N, example-major: dloss/dh_t from the output layer
    Buffer input_grad;   // d_e x N, time-major: dloss/dx_t
    Buffer carry_h, carry_c, step_a, step_b;              // per-step H x B scratch
    Buffer weight_em, weight_tm;                          // N: c_j per column, in each layout
    Matrix gather_d, gather_u, gather_x;                  // one example's norm
    std::vector<double> gram_d, gram_u;                   // its Gram matrices
    std::vector<double> output_norm2;  // per sorted example: the output layer's part of ||g_j||^2
    std::vector<Scalar> gradient;  // the share's clipped sum (shares after the first)
    bool any_clipped = false;
  };

  void build_blocks();
  // Splits the batch into shares (at most one per core, none empty).
  size_t split(const ExampleBatch& batch);
  // Per-example mean losses into losses[k] for share example k; with
  // output_norms (and keep_for_backward), also w.output_norm2.
  void forward(Workspace& w, bool keep_for_backward, bool output_norms, double* losses);
  // Example j's (sorted) output-layer part of its squared gradient norm,
  // once its logits hold dloss/dz.
  double output_layer_norm2(Workspace& w, size_t j) const;
  // Backward pass and, if wanted, norms and clip factors (share order).
  void backward(Workspace& w, const GradientOptions& options, double* norms, double* clip_factors);
  // ADDS the share's (clipped) gradient sum to out, or writes it there
  // (overwrite: no need to zero the buffer first).
  void add_gradient(Workspace& w, Scalar* out, bool overwrite);
  MatrixMap view(Scalar* base, size_t index) const;
  ConstMatrixMap cview(const Scalar* base, size_t index) const;

  LanguageModelConfig config_;
  std::vector<Scalar> parameters_;
  std::vector<ParameterBlock> blocks_;
  std::vector<Workspace> workspaces_;
};

using LanguageModel = LanguageModelT<float>;

extern template class LanguageModelT<float>;
extern template class LanguageModelT<double>;

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_LANGUAGE_MODEL_H
