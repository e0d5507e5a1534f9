// Next-word suggestions on the device from a NextWordModel, with integer
// arithmetic only and the caller's memory.
//
// Activations are Q12 (int16 for the input and hidden vectors, int32 for
// the cell). A gate row: acc = sum int8 w * Q12 a (int32), then
// (acc * multiplier) >> 24 is the Q12 dot product of the real weights (int64
// product), plus the Q12 bias. sigmoid(x) = (1 + tanh(x / 2)) / 2 and tanh
// come from a 257-entry table on [0, 8] with linear interpolation
// (sdk/src/tanh_table.inc). Logits are Q12; top_k ranks them.
//
//   static uint8_t scratch[...];  // NextWordPredictor::scratch_size(model)
//   NextWordPredictor p;
//   p.init(model, scratch, sizeof scratch);
//   for (token : context) p.feed(token);
//   p.top_k(3, ids, scores);
#ifndef BLUR_NEXT_WORD_PREDICTOR_H
#define BLUR_NEXT_WORD_PREDICTOR_H

#include <stddef.h>
#include <stdint.h>

#include "blur/model/next_word_model.h"
#include "blur/status.h"

namespace blur {

inline constexpr uint32_t kMaxSuggestions = 16;

class NextWordPredictor {
 public:
  // Bytes of caller memory the predictor needs for `model`: the input and
  // hidden vectors (int16), the cell and the gate pre-activations (int32).
  static size_t scratch_size(const NextWordModel& model);

  // Binds the model and scratch (4-byte aligned, >= scratch_size) and
  // resets the state. kBufferTooSmall / kInvalidArgument otherwise.
  Status init(const NextWordModel& model, uint8_t* scratch, size_t size);
  // Zero hidden and cell state: the start of a new context.
  void reset();
  // Advances the LSTM by one token (kInvalidArgument if >= vocab size).
  Status feed(uint32_t token);
  // The k (1..kMaxSuggestions) highest-scoring next tokens, best first,
  // ids below the model's special-token count skipped; scores are Q12
  // logits. Ties go to the lower id.
  Status top_k(uint32_t k, uint32_t* ids, int32_t* scores) const;
  // The Q12 logit of one token after the tokens fed so far.
  Status logit(uint32_t token, int32_t* out) const;

 private:
  const NextWordModel* model_ = nullptr;
  int16_t* input_ = nullptr;   // d
  int16_t* hidden_ = nullptr;  // h
  int32_t* cell_ = nullptr;    // h
  int32_t* gates_ = nullptr;   // 4h
};

}  // namespace blur

#endif  // BLUR_NEXT_WORD_PREDICTOR_H
