// blur-trainer's subcommands: train, eval, privacy, audit-dpsgd,
// export-model, canary, suggest.
#ifndef BLUR_TRAINER_CLI_LM_COMMANDS_H
#define BLUR_TRAINER_CLI_LM_COMMANDS_H

#include <CLI/CLI.hpp>
#include <memory>

namespace blur::trainer {

// The subcommands and the options they parse into: construct before
// app.parse(), run after; the object must outlive the parse.
class LanguageModelCommands {
 public:
  explicit LanguageModelCommands(CLI::App& app);
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

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_CLI_LM_COMMANDS_H
