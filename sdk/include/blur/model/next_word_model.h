// The device's next-word model: a one-layer word LSTM exported by the
// trainer (`blur-trainer export-model`) as int8 weights with per-row
// scales, read in place from flash or a file the app loaded (zero copy).
//
// File format "BLNW" version 1, little-endian throughout:
//   header (40 bytes): magic "BLNW", version 1, vocab V, embedding d,
//     hidden h, special-token count (ids below it are never suggested),
//     activation fraction bits (12), multiplier shift (24), payload bytes,
//     reserved 0
//   payload, each matrix as rows of int8 followed by one int32 multiplier
//   per row (scale * 2^24; a row's real values are int8 * scale):
//     embedding  V x d
//     input      4h x d    gates i, f, g, o (PyTorch's order)
//     recurrent  4h x h
//     gate bias  4h int32 (Q12)
//     output     V x h
//     output bias V int32 (Q12)
//   CRC-32 (IEEE) of everything before it.
// NextWordModel::open checks all of it; a model that exists is valid.
#ifndef BLUR_NEXT_WORD_MODEL_H
#define BLUR_NEXT_WORD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "blur/result.h"

namespace blur {

inline constexpr uint32_t kNextWordModelMagic = 0x574E4C42;  // "BLNW"
inline constexpr uint32_t kNextWordModelVersion = 1;
inline constexpr uint32_t kNextWordModelHeaderSize = 40;
inline constexpr uint32_t kActivationFractionBits = 12;  // Q12 activations
inline constexpr uint32_t kMultiplierShift = 24;         // per-row scale * 2^24
inline constexpr uint32_t kMaxNextWordVocab = 1u << 16;
// Embedding and hidden widths: <= 512 keeps every int8 x Q12 dot product in
// int32 (127 * 32767 * 512 < 2^31).
inline constexpr uint32_t kMaxNextWordWidth = 512;

// A matrix in the file: its int8 rows, then one int32 multiplier per row.
struct Int8Matrix {
  const int8_t* rows;          // rows x columns
  const uint8_t* multipliers;  // rows x int32 LE
  uint32_t row_count;
  uint32_t column_count;
};

class NextWordModel {
 public:
  // kInvalidArgument for a buffer that is not a version-1 model of sane
  // dimensions; kStorageCorrupt when its CRC does not match.
  static Result<NextWordModel> open(const uint8_t* bytes, size_t size);

  // The size of a model file with these dimensions (what export writes).
  static constexpr size_t file_size(uint32_t vocab, uint32_t embedding, uint32_t hidden) {
    return kNextWordModelHeaderSize + payload_size(vocab, embedding, hidden) + 4;
  }
  static constexpr size_t payload_size(uint32_t vocab, uint32_t embedding, uint32_t hidden) {
    return matrix_bytes(vocab, embedding) + matrix_bytes(4 * size_t{hidden}, embedding) +
           matrix_bytes(4 * size_t{hidden}, hidden) + 4 * (4 * size_t{hidden}) +
           matrix_bytes(vocab, hidden) + 4 * size_t{vocab};
  }

  uint32_t vocab_size() const { return vocab_; }
  uint32_t embedding_size() const { return embedding_; }
  uint32_t hidden_size() const { return hidden_; }
  uint32_t special_tokens() const { return special_tokens_; }

  const Int8Matrix& embedding() const { return embedding_matrix_; }
  const Int8Matrix& input_weights() const { return input_; }
  const Int8Matrix& recurrent_weights() const { return recurrent_; }
  const uint8_t* gate_bias() const { return gate_bias_; }  // 4h int32 LE, Q12
  const Int8Matrix& output_weights() const { return output_; }
  const uint8_t* output_bias() const { return output_bias_; }  // V int32 LE, Q12

 private:
  static constexpr size_t matrix_bytes(size_t rows, size_t columns) {
    return rows * columns + 4 * rows;
  }
  NextWordModel() = default;
  uint32_t vocab_ = 0, embedding_ = 0, hidden_ = 0, special_tokens_ = 0;
  Int8Matrix embedding_matrix_{}, input_{}, recurrent_{}, output_{};
  const uint8_t* gate_bias_ = nullptr;
  const uint8_t* output_bias_ = nullptr;
};

}  // namespace blur

#endif  // BLUR_NEXT_WORD_MODEL_H
