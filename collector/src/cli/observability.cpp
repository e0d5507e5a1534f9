#include "cli/observability.h"

#include <chrono>
#include <cstdio>

#include "api/operator_routes.h"

namespace blur::collector {

namespace {

// "HOST:PORT" or "[V6]:PORT".
Outcome<http::Server::Options> listen_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  const Error bad = invalid("--metrics-address must be HOST:PORT, not '" + text + "'");
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return bad;
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(port) > 65535) {
    return bad;
  }
  http::Server::Options options;
  options.address = host;
  options.port = std::stoi(port);
  options.threads = 1;  // scrapes and probes are few
  return options;
}

}  // namespace

void add_observability_options(CLI::App& serve, ObservabilityOptions& options) {
  serve.add_option("--metrics-address", options.metrics_address,
                   "Serve /metrics, /healthz and /readyz on this HOST:PORT (plain HTTP) instead "
                   "of /metrics on the API's port");
  serve.add_option("--log-file", options.log_file,
                   "Append the request log (one JSON line per request) to this file instead of "
                   "stderr");
  serve.add_option("--log-requests", options.log_requests, "Write the request log (true/false)")
      ->capture_default_str();
  serve
      .add_option("--ready-timeout", options.ready_timeout_seconds,
                  "/readyz: seconds the database has to answer")
      ->check(CLI::Range(0.01, 60.0))
      ->capture_default_str();
}

Outcome<std::unique_ptr<Observability>> Observability::create(const ObservabilityOptions& options,
                                                              Store& store) {
  if (!options.metrics_address.empty()) {
    if (auto address = listen_address(options.metrics_address); !address) return address.error();
  }
  std::unique_ptr<observe::RequestLog> log;
  if (options.log_requests) {
    if (options.log_file.empty()) {
      log = std::make_unique<observe::RequestLog>();
    } else {
      auto opened = observe::RequestLog::open(options.log_file);
      if (!opened) return opened.error();
      log = std::move(opened).value();
    }
  }
  return std::unique_ptr<Observability>(new Observability(options, store, std::move(log)));
}

Observability::Observability(const ObservabilityOptions& options, Store& store,
                             std::unique_ptr<observe::RequestLog> log)
    : options_(options),
      log_(std::move(log)),
      observer_(metrics_, log_.get()),
      writes_([](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }),
      monitor_(
          store, &metrics_.store_size_bytes,
          {std::chrono::milliseconds(static_cast<long long>(options.ready_timeout_seconds * 1000)),
           std::chrono::milliseconds(15000)},
          &writes_, &metrics_.devices_enrolled_last_day) {}

Observability::~Observability() { stop(); }

void Observability::attach(GroupCommitter::Options* options) {
  options->on_commit = [this](std::chrono::nanoseconds duration, size_t reports,
                              const Fallible& result) {
    metrics_.record_commit(duration, reports, result.ok());
    writes_.record_commit(result);
  };
}

void Observability::watch(const GroupCommitter& committer) {
  registry_.gauge_function("blur_collector_commit_queue_reports",
                           "Reports waiting for the database (in batches not yet committed)", {},
                           [&committer] {
                             return static_cast<double>(committer.stats().queued_reports);
                           });
}

void Observability::attach(http::Server::Options* options) {
  options->on_complete = observer_.hook();
}

void Observability::add_routes(http::Server& api_server) {
  const bool separate = !options_.metrics_address.empty();
  add_operator_routes(api_server, {separate ? nullptr : &registry_, &monitor_, false});
  observer_.add_routes(api_server);
  registry_.gauge_function(
      "blur_collector_open_connections", "Connections open on the API's port", {},
      [&api_server] { return static_cast<double>(api_server.open_connections()); });
  if (!separate) return;
  http::Server::Options server_options = listen_address(options_.metrics_address).value();
  attach(&server_options);
  metrics_server_ = std::make_unique<http::Server>(server_options);
  add_operator_routes(*metrics_server_, {&registry_, &monitor_, true});
  observer_.add_routes(*metrics_server_);
}

Fallible Observability::start() {
  if (!metrics_server_) return done();
  std::string error;
  if (!metrics_server_->start(&error)) return invalid("metrics server: " + error);
  std::printf("blur-collector: metrics on http://%s:%d (/metrics, /healthz, /readyz)\n",
              options_.metrics_address.substr(0, options_.metrics_address.rfind(':')).c_str(),
              metrics_server_->port());
  std::fflush(stdout);
  metrics_thread_ = std::thread([this] { metrics_server_->run(); });
  return done();
}

void Observability::stop() {
  if (metrics_server_) metrics_server_->stop(std::chrono::milliseconds(1000));
  if (metrics_thread_.joinable()) metrics_thread_.join();
  monitor_.stop();
}

}  // namespace blur::collector
