// Internal to the HTTP server (http_server.cpp, http_session.h): the shared
// state of a Server and what a connection needs of it.
#ifndef BLUR_COLLECTOR_SERVER_HTTP_SERVER_IMPL_H
#define BLUR_COLLECTOR_SERVER_HTTP_SERVER_IMPL_H

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/connection_counts.h"
#include "server/http_server.h"
#include "server/revocation_lists.h"
#include "util/file_reloader.h"

namespace blur::collector::http {

namespace net = boost::asio;

struct Route {
  std::string name;
  std::string method;
  std::string pattern_text;
  bool literal = false;  // no regex syntax: compared as a string (faster)
  std::regex pattern;
  RouteLimits limits;
  Handler handler;
};

// A connection, as the server sees it. The calls are thread-safe: they
// post onto the connection's strand.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  // Stop taking requests: close now if idle or still reading a header,
  // otherwise after the answer in progress.
  virtual void begin_stop() = 0;
  // Close now, whatever the state.
  virtual void force_close() = 0;
  // Writes a handler's answer (from any thread).
  virtual void deliver(Response response) = 0;
  // The deadline passed (as the sweeper saw it): closes if it still has.
  virtual void deadline_passed() = 0;

  // When the current phase (handshake, header, body, answer, idle wait)
  // must be over, in steady_clock ticks; kNoDeadline while a handler works.
  // Written on the strand, read by the server's sweeper: a plain store per
  // phase instead of arming a timer per operation.
  static constexpr std::int64_t kNoDeadline = INT64_MAX;
  std::atomic<std::int64_t> deadline{kNoDeadline};
};

struct Server::Impl {
  explicit Impl(Options o);

  // What a connection asks of the server.
  enum class RouteMatch { kFound, kNoPath, kWrongMethod };
  // Finds the route for `method` and `path`; on kWrongMethod `allow` lists
  // the path's methods. May throw std::regex_error (a pathological path).
  RouteMatch find_route(const std::string& method, const std::string& path, const Route** route,
                        std::vector<std::string>* params, std::string* allow) const;
  // What becomes of a new connection from `source` (source_key()), by the
  // connections open (Options::max_connections, then the source's own
  // max_connections_per_address): served, answered 503 "overloaded" or
  // "source_connections" and closed, or, past as many refusals again in
  // flight, closed unanswered.
  enum class Admission { kServe, kRefuseOverloaded, kRefuseSource, kDrop };
  Admission admit(uint64_t source) const;
  // A connection admitted as `admission` (not kDrop); refused ones are not
  // counted in the caps.
  void add_session(const std::shared_ptr<SessionBase>& session, Admission admission,
                   uint64_t source);
  // `device`: the nonce its connection was counted for (add_device()).
  void remove_session(SessionBase* session, bool refusal, uint64_t source,
                      std::optional<uint64_t> device);
  // A served connection whose certificate names `device`, after its
  // handshake: counts it, or false if the device holds
  // max_connections_per_device already.
  bool add_device(uint64_t device);
  std::size_t session_count() const;
  // A fresh X-Request-Id value.
  static uint64_t next_request_id();

  void accept();
  void start_session(net::ip::tcp::socket socket);
  void begin_stop(std::chrono::milliseconds deadline);  // on the acceptor's strand
  void watch_stop();
  // Every sweep_period: closes the connections past their deadline.
  void sweep();
  // Loads Options::tls_client_crl_file and watches it for changes.
  Fallible load_client_crl();
  // Whether the client CRL (as the file is now) revokes `certificate`.
  bool certificate_revoked(const X509* certificate);

  Options options;
  std::vector<Route> routes;  // fixed once start() has been called
  std::atomic<bool> stopping{false};
  std::atomic<bool> started{false};

  mutable std::mutex mutex;  // guards sessions and the run() bookkeeping below
  std::unordered_map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  std::size_t refusing = 0;         // of the sessions, those being refused
  std::size_t max_connections = 1;  // the cap in force, set by start()
  std::size_t max_per_source = 1;   // Options::max_connections_per_address in force
  ConnectionCounts per_source;      // served connections by source_key()
  ConnectionCounts per_device;      // served connections by certificate nonce
  int running_threads = 0;
  std::condition_variable run_finished;

  // Declared after the sessions: the io_context's destructor destroys the
  // connections still queued in it, and they unregister themselves.
  std::optional<net::ssl::context> tls;
  net::io_context io;
  net::strand<net::io_context::executor_type> control{io.get_executor()};  // acceptor + stop
  net::ip::tcp::acceptor acceptor{control};
  net::steady_timer accept_retry{control};
  net::steady_timer stop_timer{control};
  net::steady_timer sweep_timer{control};
  std::chrono::milliseconds sweep_period{100};
  std::chrono::steady_clock::time_point stop_deadline;
  bool forced_close = false;
  bool sweep_stopped = false;  // set by watch_stop() once no connection is left
  int port = 0;

  // The client CRL, if any: crl_reloader installs new lists in `crl`.
  std::unique_ptr<FileReloader<RevocationLists>> crl_reloader;
  std::mutex crl_mutex;  // guards crl
  std::shared_ptr<const RevocationLists> crl;
};

// The key a connection from `address` counts under for the per-address
// cap: an IPv4 address (also when mapped into IPv6) as its 32 bits, an IPv6
// address as its /64 prefix. The two cannot collide for a real source: a
// prefix below 2^32 lies in ::/32, reserved (no source but ::1, whose
// prefix 0 is 0.0.0.0's key, never a client's address).
uint64_t source_key(const net::ip::address& address);

// One line to stderr; `text` must already be printable (http_text.h).
void log_line(const std::string& text);

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_HTTP_SERVER_IMPL_H
