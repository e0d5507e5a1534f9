#include "blur/model/next_word_model.h"

#include "blur/storage/crc32.h"
#include "little_endian.h"

namespace blur {

namespace {

Int8Matrix matrix_at(const uint8_t* at, uint32_t rows, uint32_t columns) {
  return Int8Matrix{reinterpret_cast<const int8_t*>(at), at + size_t{rows} * columns, rows,
                    columns};
}

size_t bytes_of(const Int8Matrix& m) {
  return size_t{m.row_count} * m.column_count + 4 * size_t{m.row_count};
}

}  // namespace

Result<NextWordModel> NextWordModel::open(const uint8_t* bytes, size_t size) {
  if (bytes == nullptr || size < kNextWordModelHeaderSize + 4) return Status::kInvalidArgument;
  if (load_le32(bytes) != kNextWordModelMagic || load_le32(bytes + 4) != kNextWordModelVersion) {
    return Status::kInvalidArgument;
  }
  const uint32_t vocab = load_le32(bytes + 8), embedding = load_le32(bytes + 12),
                 hidden = load_le32(bytes + 16), special = load_le32(bytes + 20);
  if (vocab < 2 || vocab > kMaxNextWordVocab || embedding == 0 || embedding > kMaxNextWordWidth ||
      hidden == 0 || hidden > kMaxNextWordWidth || special >= vocab ||
      load_le32(bytes + 24) != kActivationFractionBits ||
      load_le32(bytes + 28) != kMultiplierShift || load_le32(bytes + 36) != 0 ||
      load_le32(bytes + 32) != payload_size(vocab, embedding, hidden) ||
      size != file_size(vocab, embedding, hidden)) {
    return Status::kInvalidArgument;
  }
  if (load_le32(bytes + size - 4) != crc32(bytes, size - 4)) return Status::kStorageCorrupt;

  NextWordModel model;
  model.vocab_ = vocab;
  model.embedding_ = embedding;
  model.hidden_ = hidden;
  model.special_tokens_ = special;
  const uint8_t* at = bytes + kNextWordModelHeaderSize;
  model.embedding_matrix_ = matrix_at(at, vocab, embedding);
  at += bytes_of(model.embedding_matrix_);
  model.input_ = matrix_at(at, 4 * hidden, embedding);
  at += bytes_of(model.input_);
  model.recurrent_ = matrix_at(at, 4 * hidden, hidden);
  at += bytes_of(model.recurrent_);
  model.gate_bias_ = at;
  at += 4 * size_t{4 * hidden};
  model.output_ = matrix_at(at, vocab, hidden);
  at += bytes_of(model.output_);
  model.output_bias_ = at;
  return model;
}

}  // namespace blur
