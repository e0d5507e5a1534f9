#include "blur/model/next_word_predictor.h"

#include "little_endian.h"
#include "tanh_table.inc"

namespace blur {

namespace {

constexpr int32_t kOne = 1 << kActivationFractionBits;  // 1.0 in Q12
constexpr int32_t kCellLimit = 1 << 24;                 // |cell| <= 4096 in Q12

// v / 2^shift rounded half up (arithmetic shift of a two's-complement int64).
int64_t round_shift(int64_t v, uint32_t shift) {
  return (v + (int64_t{1} << (shift - 1))) >> shift;
}

int32_t clamp(int64_t v, int32_t limit) {
  return v > limit ? limit : (v < -limit ? -limit : static_cast<int32_t>(v));
}

int32_t load_i32(const uint8_t* at) { return static_cast<int32_t>(load_le32(at)); }

// tanh of a Q12 value, Q12: the table's step is 1/32 = 128 in Q12.
int32_t tanh_q12(int32_t x) {
  const int32_t t = x < 0 ? -x : x;
  int32_t y;
  if (t >= 8 * kOne) {
    y = 32767;
  } else {
    const int32_t index = t >> 7, fraction = t & 127;
    const int32_t low = kTanhQ15[index], high = kTanhQ15[index + 1];
    y = low + (((high - low) * fraction + 64) >> 7);
  }
  const int32_t q12 = (y + 4) >> 3;
  return x < 0 ? -q12 : q12;
}

// sigmoid(x) = (1 + tanh(x / 2)) / 2.
int32_t sigmoid_q12(int32_t x) { return (kOne + tanh_q12(x / 2) + 1) >> 1; }

// The Q12 dot product of a matrix row (real weights) with Q12 values.
int32_t row_dot(const Int8Matrix& m, uint32_t row, const int16_t* values) {
  const int8_t* w = m.rows + size_t{row} * m.column_count;
  int32_t acc = 0;  // fits: |w| <= 127, |value| <= 32767, columns <= 512
  for (uint32_t j = 0; j < m.column_count; ++j) acc += int32_t{w[j]} * values[j];
  const int64_t multiplier = load_i32(m.multipliers + 4 * size_t{row});
  return clamp(round_shift(int64_t{acc} * multiplier, kMultiplierShift), INT32_MAX);
}

}  // namespace

size_t NextWordPredictor::scratch_size(const NextWordModel& model) {
  const size_t d = model.embedding_size(), h = model.hidden_size();
  const size_t int16_bytes = 2 * (d + h);
  return (int16_bytes + 3) / 4 * 4 + 4 * (h + 4 * h);
}

Status NextWordPredictor::init(const NextWordModel& model, uint8_t* scratch, size_t size) {
  model_ = nullptr;
  if (scratch == nullptr || reinterpret_cast<uintptr_t>(scratch) % 4 != 0) {
    return Status::kInvalidArgument;
  }
  if (size < scratch_size(model)) return Status::kBufferTooSmall;
  const size_t d = model.embedding_size(), h = model.hidden_size();
  input_ = reinterpret_cast<int16_t*>(scratch);
  hidden_ = input_ + d;
  cell_ = reinterpret_cast<int32_t*>(scratch + (2 * (d + h) + 3) / 4 * 4);
  gates_ = cell_ + h;
  model_ = &model;
  reset();
  return Status::kOk;
}

void NextWordPredictor::reset() {
  if (model_ == nullptr) return;
  for (uint32_t j = 0; j < model_->hidden_size(); ++j) {
    hidden_[j] = 0;
    cell_[j] = 0;
  }
}

Status NextWordPredictor::feed(uint32_t token) {
  if (model_ == nullptr || token >= model_->vocab_size()) return Status::kInvalidArgument;
  const NextWordModel& m = *model_;
  const uint32_t d = m.embedding_size(), h = m.hidden_size();
  // x = the token's embedding row in Q12: int8 * (scale * 2^24) / 2^12.
  const Int8Matrix& e = m.embedding();
  const int64_t e_multiplier = load_i32(e.multipliers + 4 * size_t{token});
  const int8_t* e_row = e.rows + size_t{token} * d;
  for (uint32_t j = 0; j < d; ++j) {
    input_[j] = static_cast<int16_t>(
        clamp(round_shift(e_row[j] * e_multiplier, kMultiplierShift - kActivationFractionBits),
              INT16_MAX));
  }
  for (uint32_t r = 0; r < 4 * h; ++r) {
    const int64_t z = int64_t{row_dot(m.input_weights(), r, input_)} +
                      row_dot(m.recurrent_weights(), r, hidden_) +
                      load_i32(m.gate_bias() + 4 * size_t{r});
    gates_[r] = clamp(z, INT32_MAX);
  }
  // Gates i, f, g, o: c = f c + i g, h = o tanh(c).
  for (uint32_t j = 0; j < h; ++j) {
    const int64_t i = sigmoid_q12(gates_[j]), f = sigmoid_q12(gates_[h + j]);
    const int64_t g = tanh_q12(gates_[2 * h + j]), o = sigmoid_q12(gates_[3 * h + j]);
    cell_[j] = clamp(round_shift(f * cell_[j] + i * g, kActivationFractionBits), kCellLimit);
    hidden_[j] = static_cast<int16_t>(round_shift(o * tanh_q12(cell_[j]), kActivationFractionBits));
  }
  return Status::kOk;
}

Status NextWordPredictor::logit(uint32_t token, int32_t* out) const {
  if (model_ == nullptr || out == nullptr || token >= model_->vocab_size()) {
    return Status::kInvalidArgument;
  }
  const int64_t z = int64_t{row_dot(model_->output_weights(), token, hidden_)} +
                    load_i32(model_->output_bias() + 4 * size_t{token});
  *out = clamp(z, INT32_MAX);
  return Status::kOk;
}

Status NextWordPredictor::top_k(uint32_t k, uint32_t* ids, int32_t* scores) const {
  if (model_ == nullptr || ids == nullptr || scores == nullptr || k == 0 || k > kMaxSuggestions ||
      k > model_->vocab_size() - model_->special_tokens()) {
    return Status::kInvalidArgument;
  }
  uint32_t found = 0;
  for (uint32_t v = model_->special_tokens(); v < model_->vocab_size(); ++v) {
    int32_t score = 0;
    BLUR_TRY(logit(v, &score));
    if (found == k && score <= scores[k - 1]) continue;  // ties keep the lower id
    uint32_t at = found < k ? found++ : k - 1;
    while (at > 0 && scores[at - 1] < score) {
      ids[at] = ids[at - 1];
      scores[at] = scores[at - 1];
      --at;
    }
    ids[at] = v;
    scores[at] = score;
  }
  return Status::kOk;
}

}  // namespace blur
