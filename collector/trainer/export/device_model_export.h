// Export of a trained float LSTM to the device's int8 next-word model
// (sdk/include/blur/model/next_word_model.h): per-row symmetric quantization,
// scale = max|row| / 127, int8 = round(w / scale), the scale as a Q24
// multiplier; biases in Q12. The file ends with a CRC-32.
#ifndef BLUR_TRAINER_EXPORT_DEVICE_MODEL_EXPORT_H
#define BLUR_TRAINER_EXPORT_DEVICE_MODEL_EXPORT_H

#include <cstdint>
#include <string>
#include <vector>

namespace blur::trainer {

// A one-layer LSTM language model in float, row-major, gates in the order
// i, f, g, o (input, forget, cell candidate, output).
struct FloatLstmWeights {
  uint32_t vocab = 0, embedding = 0, hidden = 0;
  uint32_t special_tokens = 0;           // ids below it are never suggested
  std::vector<float> embedding_table;    // vocab x embedding
  std::vector<float> input_weights;      // 4 hidden x embedding
  std::vector<float> recurrent_weights;  // 4 hidden x hidden
  std::vector<float> gate_bias;          // 4 hidden (input and recurrent biases summed)
  std::vector<float> output_weights;     // vocab x hidden
  std::vector<float> output_bias;        // vocab
};

// The device model file, or an empty vector and *error (dimensions outside
// the device's limits, inconsistent sizes, non-finite or too large values).
std::vector<uint8_t> export_device_model(const FloatLstmWeights& weights, std::string* error);

// The float model's next-token logits after `context` (double precision):
// the reference the device model is compared with.
std::vector<double> float_lstm_logits(const FloatLstmWeights& weights,
                                      const std::vector<uint32_t>& context);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_EXPORT_DEVICE_MODEL_EXPORT_H
