// Keeps a serving collector's definitions current with what others change:
// collectors sharing a store and a credentials directory, or the operator.
//
//   metric definitions  read again from the store every interval (a thread
//                       of its own: a query never runs on an I/O thread)
//   credentials         the credentials file, looked at (a stat) at most
//                       every interval by the requests themselves
//                       (auth/authenticator.h)
//   now (reload_now)    SIGHUP and POST /v1/admin/reload: the configured
//                       metrics (the server file's and the metrics file's,
//                       read again) registered, the store's definitions and
//                       the credentials file read again, whatever changed
//
// Why polling the metrics table, not a version counter or LISTEN/NOTIFY:
// the table is a few rows per metric, so reading it costs what reading a
// counter would, needs no schema change, and works the same on SQLite and
// PostgreSQL. PostgreSQL's LISTEN/NOTIFY would need a connection held open
// in LISTEN and asynchronous messages in our wire client, and a
// notification sent while that connection is down is lost, so the poll
// would be needed as the fallback anyway. Connections are never touched:
// definitions change under a lock the requests take for a moment.
#ifndef BLUR_COLLECTOR_API_LIVE_RELOAD_H
#define BLUR_COLLECTOR_API_LIVE_RELOAD_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "auth/authenticator.h"
#include "store/store.h"

namespace blur::collector {

class LiveReload {
 public:
  using Log = std::function<void(const std::string& line)>;
  // The metrics the configuration names, read again from its files.
  using Configured = std::function<Outcome<std::vector<MetricConfig>>()>;

  struct Summary {
    size_t metrics = 0;                 // held after the reload
    std::vector<uint32_t> new_metrics;  // new to this collector
    std::string credentials;            // what the credentials file holds ("" without auth)
    std::vector<std::string> problems;  // what could not be taken in (the rest was)
  };

  // `authenticator` null: no credentials (serve --no-auth).
  LiveReload(Store& store, auth::Authenticator* authenticator, Configured configured, Log log);
  ~LiveReload();  // stop()
  LiveReload(const LiveReload&) = delete;
  LiveReload& operator=(const LiveReload&) = delete;

  // Reads the store's metric definitions every `interval` from now on.
  void start(std::chrono::milliseconds interval);
  void stop();

  // Everything, now; logs one line.
  Summary reload_now();

 private:
  void poll();

  Store& store_;
  auth::Authenticator* const authenticator_;
  const Configured configured_;
  const Log log_;
  std::mutex mutex_;  // one reload at a time; guards stopping_, failing_
  std::condition_variable wake_;
  bool stopping_ = false;
  bool failing_ = false;  // the last poll failed (logged once until one succeeds)
  std::thread thread_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_LIVE_RELOAD_H
