// The server's configuration file (serve --config-file, config check): one
// TOML file for the whole server. Its keys are the settings' (setting.h):
// a [table] per group (server, store, auth, limits, tls, log, monitoring,
// reads) plus top-level keys, and the metrics as [[metric]] tables (the
// metrics file's, config/metrics_file.h) or a top-level
// metrics_file = "..." naming such a file:
//
//   metrics_file = "metrics.toml"
//   [server]
//   port = 8080
//   [tls]
//   cert = "/etc/blur/cert.pem"   # relative paths: to this file's directory
//   [[metric]]
//   id = 1
//   ...
//
// Unknown tables and keys are errors naming the key, its table and where
// it is (FILE:LINE:COLUMN), and so is a value of the wrong type or out of
// its setting's range: a typo must not fall back to a default silently.
// Files named by path settings are not opened here (the caller checks
// them): parsing touches nothing but the text.
#ifndef BLUR_COLLECTOR_CONFIG_SERVER_FILE_H
#define BLUR_COLLECTOR_CONFIG_SERVER_FILE_H

#include <string>
#include <vector>

#include "config/setting.h"
#include "model/metric_config.h"
#include "util/outcome.h"

namespace blur::collector {

struct ServerFile {
  std::vector<size_t> given;          // the settings the file set (indices), in file order
  std::vector<MetricConfig> metrics;  // its [[metric]] tables (none: empty)
};

// Sets the fields of the settings the text gives. `name` labels messages
// and its directory anchors relative paths. On an error no field is set.
Outcome<ServerFile> parse_server_toml(const std::string& text, const std::string& name,
                                      const std::vector<Setting>& settings);
Outcome<ServerFile> load_server_file(const std::string& path, const std::vector<Setting>& settings);

// Every setting's value and the metrics as a server file (every key
// explicit) that parses back to the same values: what config check --print
// shows.
std::string server_toml(const std::vector<Setting>& settings,
                        const std::vector<MetricConfig>& metrics);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CONFIG_SERVER_FILE_H
