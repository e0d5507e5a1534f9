// `blur-collector serve`'s operator view: the metrics registry and every
// collector metric, the store monitor behind /readyz and the size gauge,
// the request log, and the optional metrics server
// (--metrics-address HOST:PORT: /metrics, /healthz and /readyz on an
// address of their own; /metrics then leaves the API's port).
#ifndef BLUR_COLLECTOR_CLI_OBSERVABILITY_H
#define BLUR_COLLECTOR_CLI_OBSERVABILITY_H

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "auth/secret.h"
#include "ingest/group_commit.h"
#include "observe/collector_metrics.h"
#include "observe/prometheus_registry.h"
#include "observe/request_log.h"
#include "observe/request_observer.h"
#include "observe/store_monitor.h"
#include "observe/write_health.h"
#include "server/http_server.h"
#include "store/store.h"

namespace blur::collector {

struct ObservabilityOptions {
  std::string metrics_address;  // HOST:PORT; empty: /metrics on the API's port
  std::string log_file;         // empty: stderr
  bool log_requests = true;
  double ready_timeout_seconds = 2;
  std::string token_file;  // the monitoring token; empty: the endpoints are open
};

// --metrics-address's "HOST:PORT" or "[V6]:PORT" as a server's options.
Outcome<http::Server::Options> metrics_listen_address(const std::string& text);

class Observability {
 public:
  // kInvalid for a bad --metrics-address, a log file that cannot be opened
  // or a token file that cannot be used.
  static Outcome<std::unique_ptr<Observability>> create(const ObservabilityOptions& options,
                                                        Store& store);
  ~Observability();  // stop()

  observe::CollectorMetrics& metrics() { return metrics_; }
  // Set the hooks: commit timings, and per request timings, refusals and log lines.
  void attach(GroupCommitter::Options* options);
  // The commit queue's depth, read at each scrape.
  void watch(const GroupCommitter& committer);
  void attach(http::Server::Options* options);
  // Before the API's own routes: /readyz (and /metrics unless it has a
  // server of its own; with a token, a guarded /healthz that answers before
  // the API's), and the open connections gauge.
  void add_routes(http::Server& api_server);
  // After every route, before the server starts: each route's histograms.
  void observe_routes(http::Server& api_server);
  // Starts the metrics server, if any, and prints its address.
  Fallible start();
  // Stops the metrics server and the store monitor: call it once the API's
  // server has stopped, before it is destroyed.
  void stop();

 private:
  Observability(const ObservabilityOptions& options, Store& store,
                std::unique_ptr<observe::RequestLog> log, std::optional<auth::Digest> token);

  ObservabilityOptions options_;
  observe::Registry registry_;
  observe::CollectorMetrics metrics_{registry_};
  std::unique_ptr<observe::RequestLog> log_;
  std::optional<auth::Digest> token_;  // the monitoring token's SHA-256
  observe::RequestObserver observer_;
  observe::WriteHealth writes_;
  observe::StoreMonitor monitor_;
  std::unique_ptr<http::Server> metrics_server_;
  std::thread metrics_thread_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_OBSERVABILITY_H
