// blur-device-sim suggest: a simulated keyboard running the SDK's int8
// next-word model (blur::NextWordPredictor, integer arithmetic only) on the
// file `blur-trainer export-model` wrote and its vocabulary beside it:
//
//   blur-device-sim suggest --model model.blnw --prompt "you will be" [--count 3]
//
// prints [{"prompt": ..., "suggestions": [...]}]. Typed words are lower-cased
// and split as the trainer splits them (letters, digits, inner apostrophes);
// a word outside the vocabulary is <unk>.
#ifndef BLUR_TOOLS_DEVICE_SIM_SUGGEST_H
#define BLUR_TOOLS_DEVICE_SIM_SUGGEST_H

#include <string>
#include <vector>

namespace blur::sim {

struct SuggestOptions {
  std::string model;
  std::string vocabulary;  // default: model + ".vocab"
  std::vector<std::string> prompts;
  uint32_t count = 3;
};

// 0 on success; 2 for a file that cannot be read or is not a model.
int suggest(const SuggestOptions& o);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_SUGGEST_H
