// An event-driven HTTP/1.1 server (Boost.Beast on Asio), HTTPS through
// asio::ssl (OpenSSL). A generic transport: it knows routes, limits and
// deadlines, nothing of what the handlers do.
//
// Per request: the header is read first (Options::header_timeout,
// max_header_bytes), the route is found (404 unknown path, 405 wrong
// method), the Content-Type checked against the route's (415), then the
// body is read under the route's max_body_bytes, for a Content-Length and a
// chunked body alike (400 naming the limit, without reading further), within
// Options::body_timeout. A keep-alive connection serves any number of
// requests and is closed after idle_timeout without one. A connection waits
// on the network without holding a thread: idle or slow clients cost memory
// and a descriptor, never a worker.
//
// Every error answer has a JSON body {"error": "..."} (server/json_response.h).
//
// Overload: at most Options::max_connections connections are served at
// once. Past it a new connection is still accepted, at once, and answered
// 503 with Retry-After (refusal "overloaded") without its request being
// read, then closed: a client learns at once that it should come back,
// instead of timing out in the kernel's backlog. Every 503, a handler's
// included, carries "Retry-After: Options::retry_after". Beside that cap,
// one source address may hold at most Options::max_connections_per_address
// of them, and one device (client certificate) max_connections_per_device:
// past those, the same 503, refusal "source_connections", so that one
// client holding connections cannot keep the others out.
//
// Every answer carries an "X-Request-Id" header (a random 64-bit number in
// hex) and, when Options::on_complete is set, is reported to it: one call
// per answered request, with the route's name, never its raw path.
//
// Mutual TLS (Options::tls_client_ca_file): the server asks every HTTPS
// client for a certificate and verifies one that is presented against the
// fleet's CA; one that does not verify (another CA, expired, not for client
// use) fails the handshake, so no request on that connection is read. A
// client without a certificate is served as before (devices that prove
// themselves with a token connect on the same port): requiring an identity
// is the handlers' policy. Request::client_device_nonce carries the device
// nonce a verified certificate binds (server/client_identity.h).
//
// Revocation (Options::tls_client_crl_file, server/revocation_lists.h): a
// certificate a CRL lists still completes the handshake, and each request
// on its connection comes with client_certificate_revoked set (and no
// nonce), so the handler answers a clear 401 rather than the client seeing
// a failed handshake. The check is made per request, against the CRL file
// as it is now: the file is read again when it changes (looked at every
// tls_client_crl_reload_interval); one that cannot be read or does not
// verify is logged once, and the lists loaded before stay in force.
#ifndef BLUR_COLLECTOR_SERVER_HTTP_SERVER_H
#define BLUR_COLLECTOR_SERVER_HTTP_SERVER_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace blur::collector::http {

struct Request {
  std::string method;
  std::string path;  // raw, without the query
  std::vector<std::pair<std::string, std::string>> query;  // percent-decoded, arbitrary bytes
  std::vector<std::string> path_params;                    // the route regex's captures
  std::string content_type;                                // the header's value, as sent
  std::string body;
  std::string peer;  // "address:port"
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  // The device nonce bound by the connection's client certificate, which
  // verified against Options::tls_client_ca_file; nullopt without a client
  // certificate or without a device URI in it. The same for every request
  // on the connection.
  std::optional<uint64_t> client_device_nonce;
  // The connection's certificate names a device but the client CRL revokes
  // it (then client_device_nonce is empty). Checked for each request.
  bool client_certificate_revoked = false;

  // The first query parameter called `name`, if any.
  std::optional<std::string> query_value(std::string_view name) const;
  // The first header called `name` (case-insensitive), or "".
  std::string header(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // Not sent: facts for Options::on_complete (logs, metrics). Why the request
  // was refused, as a short token (empty: it was not); the server's own
  // refusals use "malformed", "too_large", "bad_content_type", "not_found",
  // "method_not_allowed", "internal", "overloaded" (max_connections) and
  // "source_connections" (max_connections_per_address, _per_device).
  std::string refusal;
  // Numbers about the request, e.g. {"reports", 12}.
  std::vector<std::pair<std::string, uint64_t>> counts;
};

// What Options::on_complete hears of each answered request.
struct Completion {
  std::string_view method;  // as sent: untrusted bytes
  std::string_view route;   // the route's name; empty if no route matched
  int status = 0;
  // From the request's first byte to its answer being ready to send.
  std::chrono::nanoseconds latency{0};
  std::string_view request_id;         // as sent in X-Request-Id: 16 hex digits
  const Response* response = nullptr;  // its refusal and counts
};
// Runs on the connection's I/O thread before the answer is written; it must
// be quick and thread-safe. An exception it throws is ignored.
using CompletionHook = std::function<void(const Completion&)>;

// Answers one request. Call it exactly once, from any thread (the answer is
// posted to the connection's strand); later calls are ignored. If the last
// copy is destroyed without a call, the client gets a 500. Every Reply must
// be called or destroyed before the Server is destroyed.
using Reply = std::function<void(Response)>;
// Runs on an I/O thread. It may answer before returning or keep the Reply
// and answer later; an exception it throws becomes a 500 (if it had not
// answered yet) and the server goes on. The Request stays valid until the
// Reply is called (copy what is needed after that). A handler that blocks
// holds its I/O thread (and only that one).
using Handler = std::function<void(const Request&, Reply)>;

struct RouteLimits {
  // The largest body accepted; 0: none. A larger one is refused while being
  // read: 400 "body [of N bytes] exceeds <body_limit_name> (M bytes)".
  std::size_t max_body_bytes = 0;
  // Media types accepted for the request (e.g. "application/x-protobuf");
  // empty: any. Otherwise a missing or other Content-Type gets 415.
  std::vector<std::string> content_types;
  std::string body_limit_name = "the body limit";
};

class Server {
 public:
  struct Options {
    std::string address = "127.0.0.1";
    int port = 8080;  // 0: any free port (see port())
    int threads = 2;  // I/O threads; handlers run on them
    // HTTPS when both are set (PEM files).
    std::string tls_certificate_file, tls_key_file;
    // HTTPS only (start() refuses it on plain HTTP): the fleet's CA (PEM),
    // which a client certificate must chain to. Clients may still connect
    // without one. Empty: no client certificate is asked for.
    std::string tls_client_ca_file;
    // With tls_client_ca_file: a PEM file of CRLs signed by that CA
    // (server/revocation_lists.h); empty: no certificate is revoked.
    std::string tls_client_crl_file;
    // How often the CRL file is looked at for changes.
    std::chrono::milliseconds tls_client_crl_reload_interval{5000};
    // From the connection (or, on a keep-alive connection, the request's
    // first byte) to the end of the header, TLS handshake included. Fixed
    // when the phase begins: a client dripping bytes (slowloris) is closed
    // at it all the same.
    std::chrono::milliseconds header_timeout{10000};
    // For the whole body; also for writing an answer.
    std::chrono::milliseconds body_timeout{30000};
    // A keep-alive connection waiting for its next request.
    std::chrono::milliseconds idle_timeout{60000};
    std::size_t max_header_bytes = 16 * 1024;  // larger: 431
    // Connections served at once (at least 1). Each holds a descriptor and,
    // while reading, up to max_header_bytes + 32 KiB of buffer plus its
    // route's body: with the defaults and the largest batch, ~80 KiB, so
    // 4096 connections stay under ~330 MiB even if every one is mid-body,
    // while a fleet (devices that post a batch and go) needs a few hundred.
    // start() lowers the cap to fit the process's descriptor limit
    // (RLIMIT_NOFILE, see max_connections()): out of descriptors, accept()
    // fails and every new client waits unanswered, honest ones included.
    std::size_t max_connections = 4096;
    // Connections one source may hold at once (at least 1; above the cap in
    // force it is that cap). A source is an IPv4 address, or an IPv6 /64:
    // one subscriber's network, whose addresses a client may use at will.
    // The default, an eighth of the default cap, is far above what a fleet
    // behind one NAT address holds at once (a device holds a connection for
    // one request of tens of milliseconds: 512 at once carry thousands of
    // requests a second), and leaves seven eighths of the cap to the rest.
    std::size_t max_connections_per_address = 512;
    // Connections one device may hold at once (at least 1), for HTTPS
    // clients whose verified certificate names a device nonce: past it the
    // connection is answered after its handshake, 503 "source_connections".
    // A device sends one batch at a time (the collector refuses a second in
    // flight); the rest is room for reconnecting while an abandoned
    // connection waits out its deadline.
    std::size_t max_connections_per_device = 8;
    // The Retry-After of every 503: a connection slot or room in a queue
    // frees within a request or a commit, a slow client's within
    // header_timeout.
    std::chrono::seconds retry_after{1};
    CompletionHook on_complete;                // optional
  };

  explicit Server(Options options);
  ~Server();  // stops (no deadline) and waits for run() to return
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Before start(). Routes are tried in order; `path_regex` must match the
  // whole raw path, and its captures become Request::path_params. `name`
  // stands for the route in logs and metrics (default: `path_regex`).
  void route(std::string method, std::string path_regex, RouteLimits limits, Handler handler,
             std::string name = "");
  // The names of the routes, in order, each once.
  std::vector<std::string> route_names() const;
  // Every route's method and name, in order (what serve --print-routes lists).
  std::vector<std::pair<std::string, std::string>> routes() const;

  // Loads the TLS files, binds and listens (backlog SOMAXCONN). False with
  // `error` set if any of it fails. Logs a line if the connection cap had
  // to be lowered.
  bool start(std::string* error);
  int port() const;  // the bound port, after start()
  std::size_t open_connections() const;  // served and being refused
  // Source addresses (IPv6: /64 networks) with a connection served now;
  // the per-address accounting holds one entry for each.
  std::size_t open_sources() const;
  // The connection cap in force, after start(): Options::max_connections,
  // or less to fit the descriptor limit (half of what remains of it after
  // 64 for the rest of the process: the other half is for the refusals in
  // flight; past those too, a new connection is closed unanswered).
  std::size_t max_connections() const;
  // Options::max_connections_per_address, at most max_connections().
  std::size_t max_connections_per_address() const;

  // Runs the I/O threads (this one included) until stop() has finished.
  void run();

  // Graceful stop, from any thread (a signal handler must not call it):
  // stops accepting, closes idle connections and those still sending a
  // header, lets requests being read or handled finish and answers them
  // with "Connection: close", and at `deadline` closes whatever is left.
  void stop(std::chrono::milliseconds deadline);

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_HTTP_SERVER_H
