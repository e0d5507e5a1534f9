// `blur-collector serve`'s options, and their one table (serve_settings):
// each knob's key in the server file (--config-file, config/server_file.h),
// its flag, help, range and field, in one line. A flag given on the
// command line overrides the file; the file overrides the defaults.
#ifndef BLUR_COLLECTOR_CLI_SERVE_OPTIONS_H
#define BLUR_COLLECTOR_CLI_SERVE_OPTIONS_H

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "api/read_pool.h"
#include "auth/enrollment_allowance.h"
#include "cli/observability.h"
#include "config/setting.h"
#include "ingest/group_commit.h"
#include "model/metric_config.h"
#include "server/http_server.h"
#include "store/store.h"

namespace blur::collector {

struct ServeOptions {
  ServeOptions() { http.threads = 4; }

  std::string config_file;  // --config-file: the server file, if any
  std::string db = "blur.db";
  std::vector<std::string> metric_specs;  // --metric (command line only)
  std::string metrics_file;               // --metrics-file (formerly --config)
  http::Server::Options http;
  double shutdown_timeout_seconds = 10;
  ObservabilityOptions observability;
  uint64_t max_queued_reports = GroupCommitter::Options{}.max_queued_reports;
  bool no_auth = false;
  std::string auth_dir;  // default: beside an SQLite store
  auth::EnrollmentLimits enrollment;
  // How often to look for what other collectors (or the operator) changed:
  // the credentials file, the client CRL, the store's metric definitions.
  double reload_seconds = 5;
  StoreOptions store;
  ReadPool::Options reads;
  double read_deadline_seconds = 30;
  bool print_routes = false;  // list the routes and exit (tests/deploy's spec check)
};

// The table (serve_settings.cpp): every setting of `o` (pointing into it).
std::vector<Setting> serve_settings(ServeOptions& o);

// Adds each setting's flag to `serve`; the options are in the settings' order.
std::vector<CLI::Option*> add_setting_flags(CLI::App& serve, const std::vector<Setting>& settings);

// After the command line is parsed: the settings of the server file at
// `path` whose flag was not given (`flags` from add_setting_flags) are set
// from it. kInvalid names the file, the key and where it is.
Fallible apply_server_file(const std::string& path, ServeOptions& o,
                           const std::vector<CLI::Option*>& flags);

// What serve would refuse at start, checked without opening anything but
// the files the settings name: TLS certificate and key together, path
// settings readable, the metrics address, the credentials directory
// required with PostgreSQL, the monitoring token file.
Fallible check_serve_options(const ServeOptions& o);

// Every metric the options register: the server file's [[metric]] tables
// (read again: SIGHUP takes in new ones), the metrics file's, --metric's.
Outcome<std::vector<MetricConfig>> configured_metrics(const ServeOptions& o);

// Where the credentials live: --auth-dir, or DB.auth beside an SQLite file.
// Collectors sharing a PostgreSQL database must share one directory, so
// there it must be given.
Outcome<std::string> auth_directory(const ServeOptions& o);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_SERVE_OPTIONS_H
