// `blur-collector config check FILE [--print]`: validates a server file
// (serve --config-file) without serving: every key known, of its type and
// in its range, the files it names readable, the metrics valid. Exit 0 and
// one line on stdout when valid (with --print, the whole configuration
// after it, every key explicit); 2 and the problem, naming the key and
// where it is, on stderr otherwise. Whether a metric agrees with the one a
// store holds under its id is checked when serve opens the store.
#ifndef BLUR_COLLECTOR_CLI_CONFIG_COMMAND_H
#define BLUR_COLLECTOR_CLI_CONFIG_COMMAND_H

#include <CLI/CLI.hpp>

namespace blur::collector {

// Registers `config` and its `check`; the command runs (and exits) from
// within the parse.
void add_config_command(CLI::App& app);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_CONFIG_COMMAND_H
