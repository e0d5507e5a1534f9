// The int8 device model: export (collector) + integer predictor (SDK)
// against the float model, the file's validation, and the known-answer file
// tests/vectors/next_word_model.kat that the SDK's test replays on every
// target (regenerate: BLUR_WRITE_NEXT_WORD_KAT=path device_model_test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "blur/model/next_word_model.h"
#include "blur/model/next_word_predictor.h"
#include "trainer/export/device_model_export.h"

namespace {

using blur::trainer::FloatLstmWeights;

// A deterministic pseudo-random model (an LCG: the same bytes on every
// host), weights uniform in +-scale per block.
struct Lcg {
  uint64_t state;
  float next(float scale) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) / 9007199254740992.0;  // [0, 1)
    return static_cast<float>((2 * u - 1) * scale);
  }
};

FloatLstmWeights random_model(uint32_t vocab, uint32_t embedding, uint32_t hidden, uint64_t seed) {
  Lcg lcg{seed};
  FloatLstmWeights w;
  w.vocab = vocab;
  w.embedding = embedding;
  w.hidden = hidden;
  w.special_tokens = 2;
  auto fill = [&](std::vector<float>& v, size_t n, float scale) {
    v.resize(n);
    for (float& x : v) x = lcg.next(scale);
  };
  fill(w.embedding_table, size_t{vocab} * embedding, 1.0f);
  fill(w.input_weights, 4 * size_t{hidden} * embedding, 0.4f);
  fill(w.recurrent_weights, 4 * size_t{hidden} * hidden, 0.3f);
  fill(w.gate_bias, 4 * size_t{hidden}, 0.5f);
  fill(w.output_weights, size_t{vocab} * hidden, 1.5f);
  fill(w.output_bias, vocab, 1.0f);
  return w;
}

std::vector<uint32_t> random_context(Lcg& lcg, uint32_t vocab) {
  const size_t length = 1 + static_cast<size_t>((lcg.next(1) + 1) * 6);  // 1..12
  std::vector<uint32_t> context;
  for (size_t i = 0; i < length; ++i) {
    context.push_back(std::min<uint32_t>(
        vocab - 1, static_cast<uint32_t>((lcg.next(1) + 1) / 2 * static_cast<float>(vocab))));
  }
  return context;
}

struct Predictor {
  blur::NextWordModel model;
  std::vector<uint32_t> scratch;  // 4-byte aligned
  blur::NextWordPredictor predictor;
  explicit Predictor(const std::vector<uint8_t>& bytes)
      : model(blur::NextWordModel::open(bytes.data(), bytes.size()).value()) {
    scratch.resize(blur::NextWordPredictor::scratch_size(model) / 4 + 1);
    EXPECT_EQ(predictor.init(model, reinterpret_cast<uint8_t*>(scratch.data()), scratch.size() * 4),
              blur::Status::kOk);
  }
};

size_t arg_max(const std::vector<double>& logits, size_t from) {
  return static_cast<size_t>(
      std::max_element(logits.begin() + static_cast<long>(from), logits.end()) - logits.begin());
}

// The integer predictor tracks the float model: logits within 0.1 of the
// float ones (logits here spread over about +-6), and the same top-1 on at
// least 97% of 400 random contexts (a wrong gate order, a missing bias or a
// mis-scaled row drops agreement to chance: 1/200).
TEST(DeviceModel, IntegerPredictorAgreesWithTheFloatModel) {
  const FloatLstmWeights w = random_model(200, 32, 48, 7);
  std::string error;
  const std::vector<uint8_t> bytes = blur::trainer::export_device_model(w, &error);
  ASSERT_FALSE(bytes.empty()) << error;
  EXPECT_EQ(bytes.size(), blur::NextWordModel::file_size(200, 32, 48));
  Predictor p(bytes);
  Lcg lcg{99};
  int agree = 0, contexts = 400;
  double worst = 0;
  for (int c = 0; c < contexts; ++c) {
    const std::vector<uint32_t> context = random_context(lcg, w.vocab);
    p.predictor.reset();
    for (uint32_t token : context) ASSERT_EQ(p.predictor.feed(token), blur::Status::kOk);
    const std::vector<double> expected = blur::trainer::float_lstm_logits(w, context);
    for (uint32_t v = 0; v < w.vocab; ++v) {
      int32_t logit = 0;
      ASSERT_EQ(p.predictor.logit(v, &logit), blur::Status::kOk);
      worst = std::max(worst, std::fabs(logit / 4096.0 - expected[v]));
    }
    uint32_t ids[3];
    int32_t scores[3];
    ASSERT_EQ(p.predictor.top_k(3, ids, scores), blur::Status::kOk);
    EXPECT_GE(scores[0], scores[1]);
    EXPECT_GE(scores[1], scores[2]);
    EXPECT_GE(ids[2], w.special_tokens);
    agree += ids[0] == arg_max(expected, w.special_tokens);
  }
  std::printf("device vs float: top-1 agreement %d/%d, largest logit error %.4f\n", agree, contexts,
              worst);
  EXPECT_LT(worst, 0.1);
  EXPECT_GE(agree, contexts * 97 / 100);
}

TEST(DeviceModel, OpenRefusesDamagedOrForeignFiles) {
  const FloatLstmWeights w = random_model(50, 8, 8, 3);
  std::string error;
  std::vector<uint8_t> bytes = blur::trainer::export_device_model(w, &error);
  ASSERT_TRUE(blur::NextWordModel::open(bytes.data(), bytes.size()).ok());
  std::vector<uint8_t> flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_EQ(blur::NextWordModel::open(flipped.data(), flipped.size()).status(),
            blur::Status::kStorageCorrupt);
  EXPECT_EQ(blur::NextWordModel::open(bytes.data(), bytes.size() - 1).status(),
            blur::Status::kInvalidArgument);
  std::vector<uint8_t> foreign = bytes;
  foreign[0] = 'X';
  EXPECT_EQ(blur::NextWordModel::open(foreign.data(), foreign.size()).status(),
            blur::Status::kInvalidArgument);
  std::vector<uint8_t> wider = bytes;
  wider[12] = 9;  // embedding 9: sizes no longer match
  EXPECT_EQ(blur::NextWordModel::open(wider.data(), wider.size()).status(),
            blur::Status::kInvalidArgument);
  EXPECT_EQ(blur::NextWordModel::open(nullptr, 0).status(), blur::Status::kInvalidArgument);
  // Export refuses what the device cannot run.
  FloatLstmWeights bad = w;
  bad.output_weights[3] = NAN;
  EXPECT_TRUE(blur::trainer::export_device_model(bad, &error).empty());
  bad = w;
  bad.hidden = 600;
  EXPECT_TRUE(blur::trainer::export_device_model(bad, &error).empty());
  // A predictor refuses short or misaligned scratch and unknown tokens.
  const auto model = blur::NextWordModel::open(bytes.data(), bytes.size());
  blur::NextWordPredictor predictor;
  alignas(4) static uint8_t scratch[1024];
  EXPECT_EQ(predictor.init(model.value(), scratch, 8), blur::Status::kBufferTooSmall);
  EXPECT_EQ(predictor.init(model.value(), scratch + 1, 1000), blur::Status::kInvalidArgument);
  ASSERT_EQ(predictor.init(model.value(), scratch, sizeof scratch), blur::Status::kOk);
  EXPECT_EQ(predictor.feed(50), blur::Status::kInvalidArgument);
  uint32_t ids[16];
  int32_t scores[16];
  EXPECT_EQ(predictor.top_k(0, ids, scores), blur::Status::kInvalidArgument);
  EXPECT_EQ(predictor.top_k(17, ids, scores), blur::Status::kInvalidArgument);
}

// The known-answer file: the small model's bytes and its top-3 after fixed
// contexts. The SDK test (tests/sdk/next_word_predictor_test.cpp) replays
// it on host, Cortex-M4 and aarch64.
std::string kat_text() {
  const FloatLstmWeights w = random_model(64, 16, 24, 2024);
  std::string error;
  const std::vector<uint8_t> bytes = blur::trainer::export_device_model(w, &error);
  std::ostringstream out;
  out << "# tests/vectors/next_word_model.kat: written by tests/trainer/device_model_test.cpp\n"
      << "# model <hex bytes of a 64-word, 16/24-wide int8 model>, then\n"
      << "# context <token ids> -> top-3 <id:Q12 logit ...>\nmodel ";
  for (uint8_t b : bytes) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", b);
    out << hex;
  }
  out << "\n";
  Predictor p(bytes);
  Lcg lcg{5};
  for (int c = 0; c < 12; ++c) {
    const std::vector<uint32_t> context = random_context(lcg, w.vocab);
    p.predictor.reset();
    out << "context";
    for (uint32_t token : context) {
      EXPECT_EQ(p.predictor.feed(token), blur::Status::kOk);
      out << " " << token;
    }
    uint32_t ids[3];
    int32_t scores[3];
    EXPECT_EQ(p.predictor.top_k(3, ids, scores), blur::Status::kOk);
    out << " ->";
    for (int i = 0; i < 3; ++i) out << " " << ids[i] << ":" << scores[i];
    out << "\n";
  }
  return out.str();
}

TEST(DeviceModel, KnownAnswerFileIsCurrent) {
  const std::string text = kat_text();
  if (const char* path = std::getenv("BLUR_WRITE_NEXT_WORD_KAT")) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "wrote " << path;
  }
  std::ifstream file(BLUR_NEXT_WORD_KAT);
  std::stringstream stored;
  stored << file.rdbuf();
  EXPECT_TRUE(stored.str() == text)
      << "regenerate with BLUR_WRITE_NEXT_WORD_KAT=" << BLUR_NEXT_WORD_KAT;
}

}  // namespace
