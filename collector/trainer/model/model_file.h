// A trained next-word model as the trainer keeps it: the vocabulary, the
// model's size and float parameters, and what its training spent (a JSON
// summary). `blur-trainer train --out MODEL` writes it, `eval`,
// `export-model` and `canary` read it. Unlike a checkpoint it holds no seed
// and no optimizer state: it is the release.
//
// File: "BLLM" magic, version 1, then little-endian: vocab size, embedding,
// hidden, the vocabulary words (u32 length + UTF-8 bytes each), the summary
// JSON (u32 length + bytes), the parameter count and the float32
// parameters (language_model.h's flat order), and a trailing CRC-32 of
// everything before it.
#ifndef BLUR_TRAINER_MODEL_MODEL_FILE_H
#define BLUR_TRAINER_MODEL_MODEL_FILE_H

#include <string>
#include <vector>

#include "trainer/data/evaluation.h"
#include "trainer/data/vocabulary.h"
#include "trainer/export/device_model_export.h"
#include "trainer/model/language_model.h"

namespace blur::trainer {

struct TrainedModel {
  Vocabulary vocabulary;
  LanguageModel model;
  std::string summary_json;  // privacy and training figures, for the record
};

// Throws std::runtime_error on I/O errors or a damaged or foreign file.
void save_model(const TrainedModel& trained, const std::string& path);
TrainedModel load_model(const std::string& path);

// The model's logits along a token sequence (float, the same math as
// training), for evaluate_model() and canary_exposure().
SequenceForward model_forward(const LanguageModel& model);

// The model's weights in the device exporter's layout (gate rows i, f, g, o
// as in training); ids below `special_tokens` are never suggested.
FloatLstmWeights device_weights(const LanguageModel& model, uint32_t special_tokens);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_MODEL_FILE_H
