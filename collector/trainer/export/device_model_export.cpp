#include "trainer/export/device_model_export.h"

#include <algorithm>
#include <cmath>

#include "blur/model/next_word_model.h"
#include "blur/storage/crc32.h"

namespace blur::trainer {

namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

bool put_matrix(std::vector<uint8_t>& out, const std::vector<float>& m, uint32_t rows,
                uint32_t columns, std::string* error) {
  std::vector<int32_t> multipliers(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    const float* row = m.data() + size_t{r} * columns;
    double largest = 0;
    for (uint32_t j = 0; j < columns; ++j) {
      if (!std::isfinite(row[j])) {
        *error = "a weight is not finite";
        return false;
      }
      largest = std::max(largest, std::fabs(static_cast<double>(row[j])));
    }
    const double scale = largest / 127.0;
    const double multiplier = std::round(scale * (1 << kMultiplierShift));
    if (multiplier > 2147483647.0) {
      *error = "a weight is too large for the device format (|w| >= 128)";
      return false;
    }
    multipliers[r] = static_cast<int32_t>(multiplier);
    for (uint32_t j = 0; j < columns; ++j) {
      const double q = scale == 0 ? 0 : std::round(row[j] / scale);
      out.push_back(static_cast<uint8_t>(static_cast<int8_t>(std::clamp(q, -127.0, 127.0))));
    }
  }
  for (int32_t multiplier : multipliers) put_u32(out, static_cast<uint32_t>(multiplier));
  return true;
}

bool put_bias(std::vector<uint8_t>& out, const std::vector<float>& bias, std::string* error) {
  for (float b : bias) {
    const double q = std::round(static_cast<double>(b) * (1 << kActivationFractionBits));
    if (!std::isfinite(b) || std::fabs(q) > 2147483647.0) {
      *error = "a bias is not finite or too large";
      return false;
    }
    put_u32(out, static_cast<uint32_t>(static_cast<int32_t>(q)));
  }
  return true;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

}  // namespace

std::vector<uint8_t> export_device_model(const FloatLstmWeights& w, std::string* error) {
  const size_t V = w.vocab, d = w.embedding, h = w.hidden;
  if (V < 2 || V > kMaxNextWordVocab || d == 0 || d > kMaxNextWordWidth || h == 0 ||
      h > kMaxNextWordWidth || w.special_tokens >= V) {
    *error = "model dimensions outside the device's limits (vocab 2.." +
             std::to_string(kMaxNextWordVocab) + ", widths 1.." +
             std::to_string(kMaxNextWordWidth) + ")";
    return {};
  }
  if (w.embedding_table.size() != V * d || w.input_weights.size() != 4 * h * d ||
      w.recurrent_weights.size() != 4 * h * h || w.gate_bias.size() != 4 * h ||
      w.output_weights.size() != V * h || w.output_bias.size() != V) {
    *error = "weight arrays do not match the model's dimensions";
    return {};
  }
  std::vector<uint8_t> out;
  out.reserve(NextWordModel::file_size(w.vocab, w.embedding, w.hidden));
  put_u32(out, kNextWordModelMagic);
  put_u32(out, kNextWordModelVersion);
  put_u32(out, w.vocab);
  put_u32(out, w.embedding);
  put_u32(out, w.hidden);
  put_u32(out, w.special_tokens);
  put_u32(out, kActivationFractionBits);
  put_u32(out, kMultiplierShift);
  put_u32(out, static_cast<uint32_t>(NextWordModel::payload_size(w.vocab, w.embedding, w.hidden)));
  put_u32(out, 0);
  if (!put_matrix(out, w.embedding_table, w.vocab, w.embedding, error) ||
      !put_matrix(out, w.input_weights, 4 * w.hidden, w.embedding, error) ||
      !put_matrix(out, w.recurrent_weights, 4 * w.hidden, w.hidden, error) ||
      !put_bias(out, w.gate_bias, error) ||
      !put_matrix(out, w.output_weights, w.vocab, w.hidden, error) ||
      !put_bias(out, w.output_bias, error)) {
    return {};
  }
  put_u32(out, blur::crc32(out.data(), out.size()));
  return out;
}

std::vector<double> float_lstm_logits(const FloatLstmWeights& w,
                                      const std::vector<uint32_t>& context) {
  const size_t d = w.embedding, h = w.hidden;
  std::vector<double> hidden(h, 0), cell(h, 0), gates(4 * h);
  for (uint32_t token : context) {
    const float* x = w.embedding_table.data() + size_t{token} * d;
    for (size_t r = 0; r < 4 * h; ++r) {
      double z = w.gate_bias[r];
      for (size_t j = 0; j < d; ++j) z += double{w.input_weights[r * d + j]} * x[j];
      for (size_t j = 0; j < h; ++j) z += double{w.recurrent_weights[r * h + j]} * hidden[j];
      gates[r] = z;
    }
    for (size_t j = 0; j < h; ++j) {
      cell[j] = sigmoid(gates[h + j]) * cell[j] + sigmoid(gates[j]) * std::tanh(gates[2 * h + j]);
      hidden[j] = sigmoid(gates[3 * h + j]) * std::tanh(cell[j]);
    }
  }
  std::vector<double> logits(w.vocab);
  for (size_t v = 0; v < w.vocab; ++v) {
    double z = w.output_bias[v];
    for (size_t j = 0; j < h; ++j) z += double{w.output_weights[v * h + j]} * hidden[j];
    logits[v] = z;
  }
  return logits;
}

}  // namespace blur::trainer
