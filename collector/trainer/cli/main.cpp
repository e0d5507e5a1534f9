// blur-trainer: the DP-SGD next-word language model, apart from the
// telemetry collector (it never opens the collector's store).
//
//   blur-trainer train --corpus fortunes --out model.blm [--epsilon 3] ...
//                      [--discovered-words FILE]   (blur-collector discovered-words --out FILE)
//   blur-trainer eval | privacy | audit-dpsgd | export-model | canary | suggest ...
#include <CLI/CLI.hpp>

#include "trainer/cli/lm_commands.h"

int main(int argc, char** argv) {
  CLI::App app{"blur-trainer: trains, evaluates, audits and exports the DP-SGD next-word model"};
  app.require_subcommand(1);
  const blur::trainer::LanguageModelCommands commands(app);
  CLI11_PARSE(app, argc, argv);
  return commands.run();
}
