#include "api/live_reload.h"

#include "util/file_watch.h"

namespace blur::collector {

namespace {

std::string id_list(const std::vector<uint32_t>& ids) {
  std::string text;
  for (uint32_t id : ids) text += (text.empty() ? "" : ", ") + std::to_string(id);
  return text;
}

}  // namespace

LiveReload::LiveReload(Store& store, auth::Authenticator* authenticator, Configured configured,
                       Log log)
    : store_(store),
      authenticator_(authenticator),
      configured_(std::move(configured)),
      log_(std::move(log)) {}

LiveReload::~LiveReload() { stop(); }

void LiveReload::start(std::chrono::milliseconds interval) {
  thread_ = std::thread([this, interval] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, interval, [this] { return stopping_; })) {
      lock.unlock();
      poll();
      lock.lock();
    }
  });
}

void LiveReload::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LiveReload::poll() {
  auto added = store_.reload_metrics();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!added) {
    if (!failing_) {
      log_(
          one_printable_line("cannot read the metric definitions from the store (keeping those "
                             "held; trying again every interval): " +
                             added.error().message));
    }
    failing_ = true;
    return;
  }
  if (failing_) log_("the metric definitions are read from the store again");
  failing_ = false;
  if (!added->empty()) {
    log_("took in metric(s) " + id_list(added.value()) +
         " registered in the store by another collector");
  }
}

LiveReload::Summary LiveReload::reload_now() {
  std::lock_guard<std::mutex> lock(mutex_);
  Summary summary;
  if (auto added = store_.reload_metrics(); added) {
    summary.new_metrics = added.value();
  } else {
    summary.problems.push_back("the store's metric definitions: " + added.error().message);
  }
  if (configured_) {
    auto wanted = configured_();
    if (!wanted) {
      summary.problems.push_back("the configured metrics: " + wanted.error().message);
    } else {
      for (const MetricConfig& metric : wanted.value()) {
        const bool known = store_.metric(metric.id).has_value();
        if (auto registered = store_.register_metric(metric); !registered) {
          summary.problems.push_back(registered.error().message);
        } else if (!known) {
          summary.new_metrics.push_back(metric.id);
        }
      }
    }
  }
  summary.metrics = store_.metrics().size();
  if (authenticator_ != nullptr) {
    if (auto credentials = authenticator_->reload(); credentials) {
      summary.credentials = credentials.value();
    } else {
      summary.problems.push_back("keeping the credentials loaded before: " +
                                 credentials.error().message);
    }
  }
  std::string line = "reloaded: " + std::to_string(summary.metrics) + " metrics";
  if (!summary.new_metrics.empty()) line += " (new: " + id_list(summary.new_metrics) + ")";
  if (authenticator_ != nullptr) line += "; credentials: " + summary.credentials;
  for (const std::string& problem : summary.problems) line += "; NOT TAKEN IN: " + problem;
  log_(one_printable_line(line));
  return summary;
}

}  // namespace blur::collector
