#include "trainer/model/model_file.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

#include "blur/storage/crc32.h"

namespace blur::trainer {

namespace {

constexpr char kMagic[4] = {'B', 'L', 'L', 'M'};
constexpr uint32_t kVersion = 1;

// The SDK's CRC-32 (IEEE) of a byte string.
uint32_t crc32_of(const std::string& bytes) {
  return blur::crc32(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

void put_bytes(std::string& out, const std::string& s) {
  put_u32(out, static_cast<uint32_t>(s.size()));
  out += s;
}

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  uint32_t u32() {
    need(4);
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(bytes_[at_ + i]);
    at_ += 4;
    return v;
  }
  std::string bytes() {
    const uint32_t n = u32();
    need(n);
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  void floats(float* out, size_t n) {
    need(4 * n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t bits = u32();
      std::memcpy(&out[i], &bits, 4);
    }
  }
  size_t position() const { return at_; }

 private:
  void need(size_t n) const {
    if (bytes_.size() - at_ < n) throw std::runtime_error("model file: truncated");
  }
  const std::string& bytes_;
  size_t at_ = 8;  // after magic and version
};

}  // namespace

void save_model(const TrainedModel& trained, const std::string& path) {
  const LanguageModelConfig& config = trained.model.config();
  if (static_cast<size_t>(config.vocab_size) != trained.vocabulary.size()) {
    throw std::runtime_error("model file: vocabulary and model sizes differ");
  }
  std::string out(kMagic, 4);
  put_u32(out, kVersion);
  put_u32(out, static_cast<uint32_t>(config.vocab_size));
  put_u32(out, static_cast<uint32_t>(config.embedding_dim));
  put_u32(out, static_cast<uint32_t>(config.hidden_dim));
  for (const std::string& word : trained.vocabulary.words()) put_bytes(out, word);
  put_bytes(out, trained.summary_json);
  put_u32(out, static_cast<uint32_t>(trained.model.parameter_count()));
  const float* p = trained.model.parameters();
  for (size_t i = 0; i < trained.model.parameter_count(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &p[i], 4);
    put_u32(out, bits);
  }
  put_u32(out, crc32_of(out));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    file.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (!file) throw std::runtime_error("model file: cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("model file: cannot rename " + tmp + " to " + path);
  }
}

TrainedModel load_model(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("model file: cannot open " + path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < 12 || bytes.compare(0, 4, std::string(kMagic, 4)) != 0) {
    throw std::runtime_error(path + " is not a Blur model file (blur-trainer train --out)");
  }
  const std::string body = bytes.substr(0, bytes.size() - 4);
  Reader trailer(bytes);
  uint32_t stored = 0;
  for (int i = 3; i >= 0; --i) stored = stored << 8 | static_cast<uint8_t>(bytes[body.size() + i]);
  if (stored != crc32_of(body)) throw std::runtime_error(path + ": damaged model file (CRC)");
  Reader in(body);
  uint32_t version = 0;
  for (int i = 3; i >= 0; --i) version = version << 8 | static_cast<uint8_t>(body[4 + i]);
  if (version != kVersion) throw std::runtime_error(path + ": unsupported model file version");
  LanguageModelConfig config;
  config.vocab_size = static_cast<int32_t>(in.u32());
  config.embedding_dim = static_cast<int32_t>(in.u32());
  config.hidden_dim = static_cast<int32_t>(in.u32());
  if (config.vocab_size <= Vocabulary::kSpecialCount || config.vocab_size > 1000000 ||
      config.embedding_dim <= 0 || config.embedding_dim > 4096 || config.hidden_dim <= 0 ||
      config.hidden_dim > 4096) {
    throw std::runtime_error(path + ": implausible model dimensions");
  }
  std::vector<std::string> words;
  for (int32_t i = 0; i < config.vocab_size; ++i) words.push_back(in.bytes());
  std::string summary = in.bytes();
  LanguageModel model(config);
  if (in.u32() != model.parameter_count()) {
    throw std::runtime_error(path + ": parameter count does not match the dimensions");
  }
  in.floats(model.parameters(), model.parameter_count());
  // The saved words start with the four specials: from_words re-adds them.
  std::vector<std::string> plain(words.begin() + Vocabulary::kSpecialCount, words.end());
  Vocabulary vocabulary = Vocabulary::from_words(plain);
  if (vocabulary.words() != words) throw std::runtime_error(path + ": malformed vocabulary");
  return TrainedModel{std::move(vocabulary), std::move(model), std::move(summary)};
}

SequenceForward model_forward(const LanguageModel& model) {
  return [&model](const TokenSequence& tokens, const LogitsVisitor& visit) {
    const LanguageModelConfig& c = model.config();
    const Eigen::Index E = c.embedding_dim, H = c.hidden_dim;
    const auto embedding = model.block(LanguageModel::kEmbedding);  // E x V
    const auto W = model.block(LanguageModel::kLstmWeight);         // 4H x (E + H)
    const auto b = model.block(LanguageModel::kLstmBias);           // 4H x 1
    const auto Wo = model.block(LanguageModel::kOutputWeight);      // V x H
    const auto bo = model.block(LanguageModel::kOutputBias);        // V x 1
    Eigen::VectorXf u = Eigen::VectorXf::Zero(E + H), c_state = Eigen::VectorXf::Zero(H);
    Eigen::VectorXf a(4 * H), logits(c.vocab_size);
    for (size_t t = 0; t + 1 < tokens.size(); ++t) {
      const int32_t w = tokens[t];
      if (w < 0 || w >= c.vocab_size) throw std::invalid_argument("token outside the vocabulary");
      u.head(E) = embedding.col(w);
      a.noalias() = W * u;
      a += b.col(0);
      const Eigen::ArrayXf i = a.segment(0, H).array().logistic();
      const Eigen::ArrayXf f = a.segment(H, H).array().logistic();
      const Eigen::ArrayXf g = a.segment(2 * H, H).array().tanh();
      const Eigen::ArrayXf o = a.segment(3 * H, H).array().logistic();
      c_state.array() = f * c_state.array() + i * g;
      u.tail(H).array() = o * c_state.array().tanh();
      logits.noalias() = Wo * u.tail(H);
      logits += bo.col(0);
      visit(t, logits.data());
    }
  };
}

FloatLstmWeights device_weights(const LanguageModel& model, uint32_t special_tokens) {
  const LanguageModelConfig& c = model.config();
  const size_t V = static_cast<size_t>(c.vocab_size), E = static_cast<size_t>(c.embedding_dim),
               H = static_cast<size_t>(c.hidden_dim);
  FloatLstmWeights w;
  w.vocab = static_cast<uint32_t>(V);
  w.embedding = static_cast<uint32_t>(E);
  w.hidden = static_cast<uint32_t>(H);
  w.special_tokens = special_tokens;
  const auto embedding = model.block(LanguageModel::kEmbedding);
  const auto W = model.block(LanguageModel::kLstmWeight);
  const auto b = model.block(LanguageModel::kLstmBias);
  const auto Wo = model.block(LanguageModel::kOutputWeight);
  const auto bo = model.block(LanguageModel::kOutputBias);
  auto ix = [](Eigen::Index i) { return i; };
  for (size_t v = 0; v < V; ++v)
    for (size_t j = 0; j < E; ++j) w.embedding_table.push_back(embedding(ix(j), ix(v)));
  for (size_t r = 0; r < 4 * H; ++r)
    for (size_t j = 0; j < E; ++j) w.input_weights.push_back(W(ix(r), ix(j)));
  for (size_t r = 0; r < 4 * H; ++r)
    for (size_t j = 0; j < H; ++j) w.recurrent_weights.push_back(W(ix(r), ix(E + j)));
  for (size_t r = 0; r < 4 * H; ++r) w.gate_bias.push_back(b(ix(r), 0));
  for (size_t v = 0; v < V; ++v)
    for (size_t j = 0; j < H; ++j) w.output_weights.push_back(Wo(ix(v), ix(j)));
  for (size_t v = 0; v < V; ++v) w.output_bias.push_back(bo(ix(v), 0));
  return w;
}

}  // namespace blur::trainer
