// blur-collector export: a metric's estimate or series as rows for
// analysts' tools (CSV or JSON lines, api/result_rows.h), offline:
//
//   blur-collector export --db blur.db --metric 1 [--from T] [--to T]
//                         [--bucket hour|day] [--postprocess norm-sub]
//                         [--top-k K] --format csv|jsonl [--out FILE]
//
// Without --bucket, one estimate over [from, to) (bucket "all"); with it,
// the series. The rows are the read API's (Accept: text/csv or
// application/x-ndjson), written through the same endpoint code.
#ifndef BLUR_COLLECTOR_CLI_EXPORT_COMMAND_H
#define BLUR_COLLECTOR_CLI_EXPORT_COMMAND_H

#include <CLI/CLI.hpp>

namespace blur::collector {

// Registers the subcommand; when it runs, it ends the parse with
// CLI::RuntimeError(exit code), which CLI11_PARSE returns (0 included).
void add_export_command(CLI::App& app);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_EXPORT_COMMAND_H
