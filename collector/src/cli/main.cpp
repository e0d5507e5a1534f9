// blur-collector: the collector server and its offline tools.
//
//   blur-collector serve --db blur.db --metric 1:rr:1.0 [--address 127.0.0.1] [--port 8080]
//                        [--threads 8] [--tls-cert C --tls-key K] [--shutdown-timeout 10]
//   blur-collector estimate --db blur.db [--metric 1]
//   blur-collector metrics --db blur.db
//   blur-collector train --corpus fortunes --epsilon 3 --delta 1e-5 --out model.blm
//   blur-collector eval --model model.blm [--corpus fortunes]
//   blur-collector privacy --sample-rate Q --noise-multiplier S --steps T --delta D
//   blur-collector export-model --model model.blm --out model.blnw
//   blur-collector canary --model model.blm --canary "..." [--candidates R]
//   blur-collector suggest --model model.blm --prompt "..."
#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "api/collector_api.h"
#include "estimate/metric_estimate.h"
#include "lm_commands.h"
#include "server/http_server.h"
#include "store/sqlite_store.h"

namespace {

using blur::collector::SqliteStore;

std::unique_ptr<SqliteStore> open_store(const std::string& path) {
  std::string error;
  auto store = SqliteStore::open(path, &error);
  if (!store) std::fprintf(stderr, "blur-collector: %s\n", error.c_str());
  return store;
}

struct ServeOptions {
  std::string db_path;
  std::vector<std::string> metric_specs;
  blur::collector::http::Server::Options http;
  double shutdown_timeout_seconds = 10;
};

int serve(const ServeOptions& options) {
  const std::string& db_path = options.db_path;
  const auto& metric_specs = options.metric_specs;
  auto store = open_store(db_path);
  if (!store) return 1;
  for (const std::string& spec : metric_specs) {
    std::string error;
    const auto metric = blur::collector::parse_metric_spec(spec, &error);
    if (!metric || !store->register_metric(*metric, &error)) {
      std::fprintf(stderr, "blur-collector: %s\n", error.c_str());
      return 2;
    }
  }
  if (store->metrics().empty()) {
    std::fprintf(stderr,
                 "blur-collector: no metrics registered; every report would be refused.\n"
                 "  Register one with --metric ID:MECHANISM:EPSILON, e.g. --metric 1:rr:1.0\n");
    return 2;
  }

  // Signals are handled by a waiting thread, not in a handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  blur::collector::http::Server server(options.http);
  blur::collector::add_collector_routes(server, *store);
  std::string error;
  if (!server.start(&error)) {
    std::fprintf(stderr, "blur-collector: %s\n", error.c_str());
    return 1;
  }
  std::printf("blur-collector: listening on %s://%s:%d (database %s, %zu metrics)\n",
              options.http.tls_certificate_file.empty() ? "http" : "https",
              options.http.address.c_str(), server.port(), db_path.c_str(),
              store->metrics().size());
  for (const auto& m : store->metrics())
    std::printf("  %s\n", blur::collector::describe(m).c_str());
  std::fflush(stdout);

  const auto deadline = std::chrono::milliseconds(
      static_cast<long long>(options.shutdown_timeout_seconds * 1000));
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::printf("blur-collector: signal %d, stopping (deadline %.3g s)\n", signal,
                options.shutdown_timeout_seconds);
    std::fflush(stdout);
    server.stop(deadline);
  });
  server.run();  // returns once stop() has finished
  waiter.join();
  std::printf("blur-collector: stopped\n");
  return 0;
}

int estimate(const std::string& db_path, const std::vector<uint32_t>& metric_ids,
             const std::string& postprocess) {
  const auto post = blur::collector::post_processing_from_name(postprocess);
  if (!post) {
    std::fprintf(stderr, "blur-collector: --postprocess must be none or norm-sub\n");
    return 2;
  }
  auto store = open_store(db_path);
  if (!store) return 1;
  nlohmann::json out = nlohmann::json::array();
  std::vector<blur::collector::MetricConfig> metrics;
  if (metric_ids.empty()) {
    metrics = store->metrics();
  } else {
    for (uint32_t id : metric_ids) {
      const auto metric = store->metric(id);
      if (!metric) {
        std::fprintf(stderr, "blur-collector: unknown metric %u in %s\n", id, db_path.c_str());
        return 2;
      }
      metrics.push_back(*metric);
    }
  }
  for (const auto& metric : metrics)
    out.push_back(blur::collector::estimate_metric(metric, *store, *post));
  std::cout << (out.size() == 1 ? out[0] : out).dump(2) << "\n";
  return 0;
}

int list_metrics(const std::string& db_path) {
  auto store = open_store(db_path);
  if (!store) return 1;
  for (const auto& m : store->metrics()) std::printf("%s\n", blur::collector::describe(m).c_str());
  std::printf("%llu reports stored\n", static_cast<unsigned long long>(store->report_count()));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"blur-collector: ingests Blur reports and debiases them into estimates"};
  app.require_subcommand(1);

  std::string db_path = "blur.db";
  ServeOptions serve_options;
  auto& http = serve_options.http;
  http.threads = 8;
  std::vector<std::string>& metric_specs = serve_options.metric_specs;
  auto* serve_cmd = app.add_subcommand("serve", "Run the HTTP collector");
  serve_cmd->add_option("--db", db_path, "SQLite database (created if missing)")
      ->capture_default_str();
  serve_cmd->add_option("--address", http.address, "Address to listen on")->capture_default_str();
  serve_cmd->add_option("--port", http.port, "Port to listen on (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  serve_cmd->add_option("--metric", metric_specs,
                        "Register a metric ID:MECHANISM:EPSILON, e.g. 1:rr:1.0 (repeatable)");
  serve_cmd
      ->add_option("--tls-cert", http.tls_certificate_file,
                   "Serve HTTPS with this PEM certificate")
      ->check(CLI::ExistingFile);
  serve_cmd->add_option("--tls-key", http.tls_key_file, "The certificate's PEM private key")
      ->check(CLI::ExistingFile);
  serve_cmd->add_option("--threads", http.threads, "HTTP I/O threads (handlers run on them)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve_cmd
      ->add_option("--shutdown-timeout", serve_options.shutdown_timeout_seconds,
                   "On SIGINT/SIGTERM: seconds to finish the requests in progress before "
                   "closing every connection")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();

  std::vector<uint32_t> metric_ids;
  auto* estimate_cmd = app.add_subcommand("estimate", "Print estimates from a database, offline");
  estimate_cmd->add_option("--db", db_path, "SQLite database")
      ->required()
      ->check(CLI::ExistingFile);
  estimate_cmd->add_option("--metric", metric_ids, "Metric id (default: all metrics)");
  std::string postprocess = "none";
  estimate_cmd
      ->add_option("--postprocess", postprocess,
                   "Also report Norm-Sub estimates (non-negative, summing to n): none or norm-sub")
      ->check(CLI::IsMember({"none", "norm-sub"}))
      ->capture_default_str();

  auto* metrics_cmd = app.add_subcommand("metrics", "List the registered metrics");
  metrics_cmd->add_option("--db", db_path, "SQLite database")->required()->check(CLI::ExistingFile);

  blur::collector::add_language_model_commands(app);

  CLI11_PARSE(app, argc, argv);
  if (serve_cmd->parsed()) {
    if (http.tls_certificate_file.empty() != http.tls_key_file.empty()) {
      std::fprintf(stderr, "blur-collector: --tls-cert and --tls-key go together\n");
      return 2;
    }
    serve_options.db_path = db_path;
    return serve(serve_options);
  }
  if (estimate_cmd->parsed()) return estimate(db_path, metric_ids, postprocess);
  if (metrics_cmd->parsed()) return list_metrics(db_path);
  return blur::collector::run_language_model_command(app);
}
