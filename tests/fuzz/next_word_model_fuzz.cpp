// libFuzzer: the next-word model file the SDK reads in place
// (sdk/include/blur/model/next_word_model.h), and the predictor running on
// whatever weights a model that opens holds. The file is untrusted: a
// corrupt download or an attacker's file on the device.
//
// The first input byte holds flags, the rest is the file:
//   bit 0: write a correct CRC-32 at the end (random bytes never carry one)
//   bit 1: build the header from the next 5 bytes (vocab 2..33, embedding
//          and hidden widths 1..8, special-token count, size off by -4..4)
//          with every constant field right, then the payload from the rest
//          (zero-padded), so the fuzzer reaches the predictor's arithmetic
//
// Properties: NextWordModel::open succeeds exactly when a reference check
// written from the header comment does (kStorageCorrupt exactly for a bad
// CRC); an open model's matrices tile the payload in the documented order,
// inside the buffer; the predictor (no UB on any weights) feeds tokens from
// the input, refuses ids past the vocabulary, and its top_k are distinct
// ids at or above the special-token count, best first, ties to the lower
// id, each scored its own logit, and no other token scores higher.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "blur/model/next_word_model.h"
#include "blur/model/next_word_predictor.h"
#include "blur/storage/crc32.h"

namespace {

using blur::NextWordModel;
using blur::NextWordPredictor;
using blur::Status;

uint32_t le32(const uint8_t* at) {
  return uint32_t{at[0]} | uint32_t{at[1]} << 8 | uint32_t{at[2]} << 16 | uint32_t{at[3]} << 24;
}

void put_le32(uint8_t* at, uint32_t value) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(value >> (8 * i));
}

// The documented sizes, written out once more from the header comment.
uint64_t reference_payload(uint64_t v, uint64_t d, uint64_t h) {
  return (v * d + 4 * v) + (4 * h * d + 4 * 4 * h) + (4 * h * h + 4 * 4 * h) + 4 * 4 * h +
         (v * h + 4 * v) + 4 * v;
}

Status reference_open(const std::vector<uint8_t>& f) {
  if (f.size() < 44) return Status::kInvalidArgument;
  const uint8_t* b = f.data();
  const uint64_t v = le32(b + 8), d = le32(b + 12), h = le32(b + 16), special = le32(b + 20);
  const bool header_ok = std::memcmp(b, "BLNW", 4) == 0 && le32(b + 4) == 1 && v >= 2 &&
                         v <= 65536 && d >= 1 && d <= 512 && h >= 1 && h <= 512 && special < v &&
                         le32(b + 24) == 12 && le32(b + 28) == 24 && le32(b + 36) == 0 &&
                         le32(b + 32) == reference_payload(v, d, h) &&
                         f.size() == 40 + reference_payload(v, d, h) + 4;
  if (!header_ok) return Status::kInvalidArgument;
  return le32(b + f.size() - 4) == blur::crc32(b, f.size() - 4) ? Status::kOk
                                                                 : Status::kStorageCorrupt;
}

void check_matrix(const blur::Int8Matrix& m, const uint8_t* at, uint32_t rows, uint32_t columns) {
  if (reinterpret_cast<const uint8_t*>(m.rows) != at || m.row_count != rows ||
      m.column_count != columns || m.multipliers != at + size_t{rows} * columns) {
    __builtin_trap();
  }
}

void check_layout(const NextWordModel& m, const std::vector<uint8_t>& f) {
  const uint8_t* b = f.data();
  if (m.vocab_size() != le32(b + 8) || m.embedding_size() != le32(b + 12) ||
      m.hidden_size() != le32(b + 16) || m.special_tokens() != le32(b + 20)) {
    __builtin_trap();
  }
  const uint32_t v = m.vocab_size(), d = m.embedding_size(), h = m.hidden_size();
  const uint8_t* at = b + 40;
  check_matrix(m.embedding(), at, v, d);
  at += size_t{v} * d + 4 * size_t{v};
  check_matrix(m.input_weights(), at, 4 * h, d);
  at += size_t{4 * h} * d + 16 * size_t{h};
  check_matrix(m.recurrent_weights(), at, 4 * h, h);
  at += size_t{4 * h} * h + 16 * size_t{h};
  if (m.gate_bias() != at) __builtin_trap();
  at += 16 * size_t{h};
  check_matrix(m.output_weights(), at, v, h);
  at += size_t{v} * h + 4 * size_t{v};
  if (m.output_bias() != at) __builtin_trap();
  at += 4 * size_t{v};
  if (at != b + f.size() - 4) __builtin_trap();  // the payload exactly, then the CRC
}

alignas(4) uint8_t g_scratch[16 * 1024];

void check_predictor(const NextWordModel& model, const uint8_t* tokens, size_t count) {
  if (NextWordPredictor::scratch_size(model) > sizeof g_scratch) return;
  NextWordPredictor p;
  if (p.init(model, g_scratch, NextWordPredictor::scratch_size(model) - 1) !=
      Status::kBufferTooSmall) {
    __builtin_trap();
  }
  if (p.init(model, g_scratch, sizeof g_scratch) != Status::kOk) __builtin_trap();
  const uint32_t v = model.vocab_size();
  if (p.feed(v) != Status::kInvalidArgument) __builtin_trap();
  for (size_t i = 0; i < count && i < 4; ++i) {
    if (p.feed(tokens[i] % v) != Status::kOk) __builtin_trap();
  }
  const uint32_t candidates = v - model.special_tokens();
  const uint32_t k = candidates < 5 ? candidates : 5;
  uint32_t ids[blur::kMaxSuggestions];
  int32_t scores[blur::kMaxSuggestions];
  if (p.top_k(candidates + 1, ids, scores) != Status::kInvalidArgument) __builtin_trap();
  if (p.top_k(k, ids, scores) != Status::kOk) __builtin_trap();
  std::vector<bool> chosen(v, false);
  for (uint32_t i = 0; i < k; ++i) {
    if (ids[i] < model.special_tokens() || ids[i] >= v || chosen[ids[i]]) __builtin_trap();
    chosen[ids[i]] = true;
    int32_t logit = 0;
    if (p.logit(ids[i], &logit) != Status::kOk || logit != scores[i]) __builtin_trap();
    if (i > 0 && (scores[i] > scores[i - 1] || (scores[i] == scores[i - 1] && ids[i] < ids[i - 1])))
      __builtin_trap();
  }
  // No token left out scores higher than the last one taken (or as high
  // with a lower id).
  for (uint32_t t = model.special_tokens(); t < v; ++t) {
    if (chosen[t]) continue;
    int32_t logit = 0;
    if (p.logit(t, &logit) != Status::kOk) __builtin_trap();
    if (logit > scores[k - 1] || (logit == scores[k - 1] && t < ids[k - 1])) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::vector<uint8_t> file;
  const uint8_t* tokens = nullptr;
  size_t token_count = 0;
  if ((flags & 2) != 0) {
    if (size < 6) return 0;
    // Small models (at most 1,820 bytes): the arithmetic is the same at any
    // width, and a campaign runs many more of them.
    const uint32_t v = 2 + data[1] % 32, d = 1 + data[2] % 8, h = 1 + data[3] % 8;
    const uint32_t special = data[4] % (v + 1);  // == v: refused
    const size_t delta = data[5] % 9;  // 4: the exact size
    file.assign(NextWordModel::file_size(v, d, h) - 4 + delta, 0);
    put_le32(file.data(), blur::kNextWordModelMagic);
    const uint32_t header[] = {1, v, d, h, special, 12, 24,
                               static_cast<uint32_t>(NextWordModel::payload_size(v, d, h)), 0};
    for (size_t i = 0; i < 9; ++i) put_le32(file.data() + 4 + 4 * i, header[i]);
    const size_t payload = size - 6 < file.size() - 40 ? size - 6 : file.size() - 40;
    std::memcpy(file.data() + 40, data + 6, payload);
    tokens = data + 1;  // the dimension bytes double as a context
    token_count = 4;
  } else {
    file.assign(data + 1, data + size);
    tokens = data + 1;
    token_count = size > 5 ? 4 : size - 1;
  }
  if ((flags & 1) != 0 && file.size() >= 4) {
    put_le32(file.data() + file.size() - 4, blur::crc32(file.data(), file.size() - 4));
  }
  const auto model = NextWordModel::open(file.data(), file.size());
  if (model.status() != reference_open(file)) __builtin_trap();
  if (!model.ok()) return 0;
  check_layout(model.value(), file);
  check_predictor(model.value(), tokens, token_count);
  return 0;
}
