// The language-model subcommands of blur-collector: train, eval, privacy,
// audit-dpsgd, export-model, canary, suggest.
#ifndef BLUR_COLLECTOR_TRAINER_CLI_LM_COMMANDS_H
#define BLUR_COLLECTOR_TRAINER_CLI_LM_COMMANDS_H

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace blur::collector {

// The words of a word-discovery metric, for `train --vocabulary-from-metric
// ID --db DB`: the collector supplies this (the trainer does not read the
// telemetry store). At most `count` words, most frequent first; throws
// std::runtime_error with a message for the user.
struct MetricVocabulary {
  std::vector<std::string> words;
  std::string source;  // what the training summary says about them
};
using VocabularyFromMetric =
    std::function<MetricVocabulary(const std::string& db, uint32_t metric_id, size_t count)>;

// The subcommands and the options they parse into: construct before
// app.parse(), run after; the object must outlive the parse.
class LanguageModelCommands {
 public:
  explicit LanguageModelCommands(CLI::App& app, VocabularyFromMetric from_metric = nullptr);
  ~LanguageModelCommands();
  LanguageModelCommands(const LanguageModelCommands&) = delete;
  LanguageModelCommands& operator=(const LanguageModelCommands&) = delete;

  // Runs the parsed one; its exit code (0 ok, 1 failure, 2 bad input or
  // none of them parsed).
  int run() const;

 private:
  struct State;  // the options parsed into and the subcommands (lm_commands.cpp)
  std::unique_ptr<State> state_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_TRAINER_CLI_LM_COMMANDS_H
