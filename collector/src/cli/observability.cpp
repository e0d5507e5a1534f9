#include "cli/observability.h"

#include <chrono>
#include <cstdio>

#include "api/operator_routes.h"
#include "auth/credentials.h"

namespace blur::collector {

Outcome<http::Server::Options> metrics_listen_address(const std::string& text) {
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

Outcome<std::unique_ptr<Observability>> Observability::create(const ObservabilityOptions& options,
                                                              Store& store) {
  if (!options.metrics_address.empty()) {
    if (auto address = metrics_listen_address(options.metrics_address); !address) {
      return address.error();
    }
  }
  std::optional<auth::Digest> token;
  if (!options.token_file.empty()) {
    auto text = auth::read_token_file(options.token_file);
    if (!text) return text.error();
    token = auth::sha256(text.value());
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
  return std::unique_ptr<Observability>(new Observability(options, store, std::move(log), token));
}

Observability::Observability(const ObservabilityOptions& options, Store& store,
                             std::unique_ptr<observe::RequestLog> log,
                             std::optional<auth::Digest> token)
    : options_(options),
      log_(std::move(log)),
      token_(token),
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
  const auth::Digest* token = token_ ? &*token_ : nullptr;
  add_operator_routes(api_server,
                      {separate ? nullptr : &registry_, &monitor_, token != nullptr, token});
  registry_.gauge_function(
      "blur_collector_open_connections", "Connections open on the API's port", {},
      [&api_server] { return static_cast<double>(api_server.open_connections()); });
  if (!separate) return;
  http::Server::Options server_options = metrics_listen_address(options_.metrics_address).value();
  attach(&server_options);
  metrics_server_ = std::make_unique<http::Server>(server_options);
  add_operator_routes(*metrics_server_, {&registry_, &monitor_, true, token});
  observer_.add_routes(*metrics_server_);
}

void Observability::observe_routes(http::Server& api_server) { observer_.add_routes(api_server); }

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
