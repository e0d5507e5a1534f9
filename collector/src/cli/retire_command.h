// `blur-collector retire --db DB --metric ID`: retires a metric (Store::retire_metric).
#ifndef BLUR_COLLECTOR_CLI_RETIRE_COMMAND_H
#define BLUR_COLLECTOR_CLI_RETIRE_COMMAND_H

#include <CLI/CLI.hpp>

namespace blur::collector {

// Adds the subcommand; when it runs, *exit_code is set to its exit status
// (left alone otherwise).
void add_retire_command(CLI::App& app, int* exit_code);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_RETIRE_COMMAND_H
