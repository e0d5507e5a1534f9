// The language-model subcommands of blur-collector: train, eval, privacy,
// export-model, canary, suggest.
#ifndef BLUR_COLLECTOR_CLI_LM_COMMANDS_H
#define BLUR_COLLECTOR_CLI_LM_COMMANDS_H

#include <CLI/CLI.hpp>

namespace blur::collector {

void add_language_model_commands(CLI::App& app);
// Runs the parsed one; its exit code (0 ok, 1 failure, 2 bad input).
int run_language_model_command(const CLI::App& app);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_LM_COMMANDS_H
