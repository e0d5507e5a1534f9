#include "suggest.h"

#include <cctype>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "blur/model/next_word_model.h"
#include "blur/model/next_word_predictor.h"
#include "options.h"

namespace blur::sim {

namespace {

constexpr uint32_t kUnknown = 1;  // the trainer's <unk>
constexpr uint32_t kBegin = 2;    // <s>

// The typed words: ASCII lower-cased; letters, digits and apostrophes
// between them (the trainer's rule for the text it learned from).
std::vector<std::string> typed_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    while (!word.empty() && word.back() == '\'') word.pop_back();
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      word.push_back(static_cast<char>(std::tolower(u)));
    } else if (c == '\'' && !word.empty()) {
      word.push_back(c);
    } else {
      flush();
    }
  }
  flush();
  return words;
}

}  // namespace

int suggest(const SuggestOptions& o) {
  std::ifstream model_file(o.model, std::ios::binary);
  if (!model_file) return fail("cannot read " + o.model);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(model_file)),
                                   std::istreambuf_iterator<char>());
  const auto model = NextWordModel::open(bytes.data(), bytes.size());
  if (!model.ok()) {
    return fail(o.model + " is not a device model: " + status_name(model.status()));
  }
  const std::string vocabulary_path = o.vocabulary.empty() ? o.model + ".vocab" : o.vocabulary;
  std::ifstream vocabulary_file(vocabulary_path);
  if (!vocabulary_file) return fail("cannot read the vocabulary " + vocabulary_path);
  std::vector<std::string> words;
  std::string line;
  if (!std::getline(vocabulary_file, line) || line.rfind("#blur-vocabulary", 0) != 0) {
    return fail(vocabulary_path + " is not a vocabulary file");
  }
  while (std::getline(vocabulary_file, line)) words.push_back(line);
  if (words.size() != model.value().vocab_size()) {
    return fail(vocabulary_path + " has " + std::to_string(words.size()) +
                " tokens, the model " + std::to_string(model.value().vocab_size()));
  }
  std::unordered_map<std::string, uint32_t> ids;
  for (uint32_t id = 0; id < words.size(); ++id) ids.emplace(words[id], id);

  std::vector<uint8_t> scratch(NextWordPredictor::scratch_size(model.value()));
  NextWordPredictor predictor;
  if (predictor.init(model.value(), scratch.data(), scratch.size()) != Status::kOk) {
    return fail("the predictor refuses " + o.model);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& prompt : o.prompts) {
    predictor.reset();
    Status status = predictor.feed(kBegin);
    for (const std::string& w : typed_words(prompt)) {
      if (status != Status::kOk) break;
      const auto found = ids.find(w);
      status = predictor.feed(found == ids.end() ? kUnknown : found->second);
    }
    std::vector<uint32_t> top(o.count);
    std::vector<int32_t> scores(o.count);
    if (status == Status::kOk) status = predictor.top_k(o.count, top.data(), scores.data());
    if (status != Status::kOk) return fail(std::string("predictor: ") + status_name(status));
    nlohmann::json suggestions = nlohmann::json::array();
    for (uint32_t id : top) suggestions.push_back(words[id]);
    out.push_back({{"prompt", prompt}, {"suggestions", suggestions}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace blur::sim
