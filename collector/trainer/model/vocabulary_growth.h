// New words for a pretrained model: the keyboard loop's fine-tuning starts
// from a public model and adds the words the fleet discovered under local
// DP (a word-discovery metric's file) that the public vocabulary lacks.
//
// Each added word starts as the model's <unk>: its embedding column and
// output row are copies of <unk>'s, and <unk>'s output bias b is split
// between <unk> and the k added words, each getting b - ln(k + 1). The
// grown model then gives every known word exactly the probability the
// public model gave it, and <unk> + the added words together <unk>'s old
// probability (k + 1 equal shares of e^b): fine-tuning begins where the
// public model was and learns the new words apart from there.
//
// It reads no private data: the public model and the discovered words
// (already released by the collector) are its only inputs.
#ifndef BLUR_TRAINER_MODEL_VOCABULARY_GROWTH_H
#define BLUR_TRAINER_MODEL_VOCABULARY_GROWTH_H

#include <string>
#include <vector>

#include "trainer/model/model_file.h"

namespace blur::trainer {

struct GrownModel {
  TrainedModel trained;
  std::vector<std::string> added;  // the words new to the model, in the order given
};

// `words` not already in `model`'s vocabulary (nor special token names) are
// appended to it, in order, each once. Throws std::invalid_argument when
// the grown vocabulary would exceed the device model's 65,536 tokens.
GrownModel grow_vocabulary(const TrainedModel& model, const std::vector<std::string>& words);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_VOCABULARY_GROWTH_H
