// The device's next-word predictor replays the collector's known answers
// (tests/vectors/next_word_model.kat: an exported int8 model and its top-3
// after fixed contexts) bit for bit: the same integers on host, Cortex-M4
// and aarch64. Agreement with the float model is the collector's test
// (tests/trainer/device_model_test.cpp).
#include "blur/model/next_word_predictor.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include "blur/model/next_word_model.h"
#include "kat_next_word_model.inc"  // kKatNextWordModel

namespace {

using blur::Status;

alignas(4) uint8_t g_model[16384];
alignas(4) uint8_t g_scratch[1024];

int hex_digit(char c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

TEST(NextWordPredictor, ReplaysTheCollectorsKnownAnswers) {
  const char* model_line = strstr(kKatNextWordModel, "\nmodel ");
  ASSERT_TRUE(model_line != nullptr);
  const char* hex = model_line + 7;
  size_t size = 0;
  while (hex[2 * size] != '\n') {
    ASSERT_LT(size, sizeof g_model);
    g_model[size] =
        static_cast<uint8_t>(hex_digit(hex[2 * size]) * 16 + hex_digit(hex[2 * size + 1]));
    ++size;
  }
  const auto model = blur::NextWordModel::open(g_model, size);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model.value().vocab_size(), 64u);
  ASSERT_LE(blur::NextWordPredictor::scratch_size(model.value()), sizeof g_scratch);
  blur::NextWordPredictor predictor;
  ASSERT_EQ(predictor.init(model.value(), g_scratch, sizeof g_scratch), Status::kOk);

  int contexts = 0;
  for (const char* line = strstr(hex, "\ncontext "); line != nullptr;
       line = strstr(line + 1, "\ncontext ")) {
    predictor.reset();
    char* at = const_cast<char*>(line + 9);
    while (*at != '-') {
      const unsigned long token = strtoul(at, &at, 10);
      ASSERT_EQ(predictor.feed(static_cast<uint32_t>(token)), Status::kOk);
      while (*at == ' ') ++at;
    }
    at += 2;  // "->"
    uint32_t ids[3];
    int32_t scores[3];
    ASSERT_EQ(predictor.top_k(3, ids, scores), Status::kOk);
    for (int i = 0; i < 3; ++i) {
      const unsigned long id = strtoul(at, &at, 10);
      const long score = strtol(at + 1, &at, 10);
      EXPECT_EQ(ids[i], static_cast<uint32_t>(id));
      EXPECT_EQ(scores[i], static_cast<int32_t>(score));
    }
    ++contexts;
  }
  EXPECT_EQ(contexts, 12);
  // A flipped bit anywhere in the file is caught by its CRC.
  g_model[size / 3] ^= 1;
  EXPECT_EQ(blur::NextWordModel::open(g_model, size).status(), Status::kStorageCorrupt);
}

}  // namespace
