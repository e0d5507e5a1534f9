#include "server/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <thread>

#include "server/http_server_impl.h"
#include "server/http_session.h"

namespace blur::collector::http {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool has_regex_syntax(const std::string& pattern) {
  return pattern.find_first_of("\\^$.|?*+()[]{}") != std::string::npos;
}

std::string endpoint_text(const net::ip::tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  return endpoint.address().to_string(ec) + ":" + std::to_string(endpoint.port());
}

// Options::max_connections, lowered so that the served connections and
// as many refusals in flight fit the descriptor limit, with 64 left for the
// store, the logs and the listener.
std::size_t connection_cap(std::size_t wanted) {
  constexpr rlim_t kReserve = 64;
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return wanted;
  const rlim_t fit = files.rlim_cur > 2 * kReserve ? (files.rlim_cur - kReserve) / 2 : 32;
  return std::min<std::size_t>(wanted, static_cast<std::size_t>(fit));
}

// Mutual TLS: ask every client for a certificate and verify the one it
// presents against `ca_file` alone, but let clients without one in (no
// SSL_VERIFY_FAIL_IF_NO_PEER_CERT): devices with tokens share the port.
boost::system::error_code ask_for_client_certificates(net::ssl::context& tls,
                                                      const std::string& ca_file) {
  boost::system::error_code ec;
  tls.load_verify_file(ca_file, ec);
  if (!ec) tls.set_verify_mode(net::ssl::verify_peer, ec);
  if (ec) return ec;
  SSL_CTX* context = tls.native_handle();
  // The CertificateRequest names the fleet's CA, for clients holding
  // several certificates.
  STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str());
  if (names == nullptr) return net::error::invalid_argument;
  SSL_CTX_set_client_CA_list(context, names);
  // The identity is read once, after the handshake: a client may not
  // renegotiate another certificate in (TLS 1.2).
  SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION);
  // Without a session id context OpenSSL fails the handshake of a client
  // resuming a session that carried a certificate, instead of resuming it.
  static const unsigned char kSessionContext[] = "blur-collector";
  if (SSL_CTX_set_session_id_context(context, kSessionContext, sizeof kSessionContext - 1) != 1) {
    return net::error::invalid_argument;
  }
  return ec;
}

}  // namespace

void log_line(const std::string& text) { std::fprintf(stderr, "%s\n", text.c_str()); }

uint64_t source_key(const net::ip::address& address) {
  if (address.is_v6() && !address.to_v6().is_v4_mapped()) {
    const auto bytes = address.to_v6().to_bytes();
    uint64_t prefix = 0;
    for (int i = 0; i < 8; ++i) prefix = prefix << 8 | bytes[static_cast<std::size_t>(i)];
    return prefix;
  }
  const net::ip::address_v4 v4 = address.is_v4()
                                     ? address.to_v4()
                                     : address.to_v6().to_v4();  // v4-mapped
  return v4.to_uint();
}

Fallible Server::Impl::load_client_crl() {
  const std::string& file = options.tls_client_crl_file;
  const std::string& ca_file = options.tls_client_ca_file;
  auto load = [ca_file](const std::string& path) {
    return RevocationLists::load(path, ca_file, static_cast<int64_t>(std::time(nullptr)));
  };
  const FileStamp stamp = stamp_of(file);  // before reading: a change after it is seen
  auto lists = load(file);
  if (!lists) return lists.error();
  log_line("blur-collector: client CRL " + printable(file) + ": " +
           printable(lists->summary(), 1000));
  crl = std::make_shared<const RevocationLists>(std::move(lists).value());
  crl_reloader = std::make_unique<FileReloader<RevocationLists>>(
      file, "client CRL", stamp, load, [this](RevocationLists loaded) {
        auto next = std::make_shared<const RevocationLists>(std::move(loaded));
        std::lock_guard<std::mutex> lock(crl_mutex);
        crl = next;
        return next->summary();
      });
  crl_reloader->watch(options.tls_client_crl_reload_interval,
                      [](const std::string& line) { log_line("blur-collector: " + line); });
  return done();
}

bool Server::Impl::certificate_revoked(const X509* certificate) {
  if (!crl_reloader) return false;
  crl_reloader->refresh();
  std::shared_ptr<const RevocationLists> lists;
  {
    std::lock_guard<std::mutex> lock(crl_mutex);
    lists = crl;
  }
  return lists->revokes(certificate);
}

std::optional<std::string> Request::query_value(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::string Request::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (equals_ignoring_case(key, name)) return value;
  }
  return "";
}

Server::Impl::Impl(Options o) : options(std::move(o)) {}

Server::Impl::RouteMatch Server::Impl::find_route(const std::string& method,
                                                  const std::string& path, const Route** route,
                                                  std::vector<std::string>* params,
                                                  std::string* allow) const {
  for (const Route& r : routes) {
    std::smatch match;
    const bool matched =
        r.literal ? path == r.pattern_text : std::regex_match(path, match, r.pattern);
    if (!matched) continue;
    if (r.method != method) {
      *allow += (allow->empty() ? "" : ", ") + r.method;
      continue;
    }
    params->clear();
    for (std::size_t i = 1; i < match.size(); ++i) params->push_back(match[i].str());
    *route = &r;
    return RouteMatch::kFound;
  }
  return allow->empty() ? RouteMatch::kNoPath : RouteMatch::kWrongMethod;
}

// Called on the control strand only, like add_session(): the counts can
// only fall between the two calls, so the caps hold. The global cap first:
// a full server answers "overloaded" whoever asks.
Server::Impl::Admission Server::Impl::admit(uint64_t source) const {
  std::lock_guard<std::mutex> lock(mutex);
  Admission refusal = Admission::kRefuseOverloaded;
  if (sessions.size() - refusing < max_connections) {
    if (per_source.of(source) < max_per_source) return Admission::kServe;
    refusal = Admission::kRefuseSource;
  }
  return refusing < max_connections ? refusal : Admission::kDrop;
}

void Server::Impl::add_session(const std::shared_ptr<SessionBase>& session, Admission admission,
                               uint64_t source) {
  std::lock_guard<std::mutex> lock(mutex);
  sessions.emplace(session.get(), session);
  if (admission == Admission::kServe) {
    per_source.try_add(source, SIZE_MAX);  // admit() checked the limit
  } else {
    ++refusing;
  }
}

void Server::Impl::remove_session(SessionBase* session, bool refusal, uint64_t source,
                                  std::optional<uint64_t> device) {
  std::lock_guard<std::mutex> lock(mutex);
  if (sessions.erase(session) == 0) return;
  if (refusal) {
    --refusing;
  } else {
    per_source.remove(source);
  }
  if (device) per_device.remove(*device);
}

bool Server::Impl::add_device(uint64_t device) {
  std::lock_guard<std::mutex> lock(mutex);
  return per_device.try_add(device, options.max_connections_per_device);
}

std::size_t Server::Impl::session_count() const {
  std::lock_guard<std::mutex> lock(mutex);
  return sessions.size();
}

// Per thread: a splitmix64 sequence from a random seed. No lock, no
// syscall per request; the ids need to be unique, not secret.
uint64_t Server::Impl::next_request_id() {
  thread_local uint64_t state = [] {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  }();
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void Server::Impl::accept() {
  acceptor.async_accept(
      net::make_strand(io), [this](boost::system::error_code ec, net::ip::tcp::socket socket) {
        if (stopping || !acceptor.is_open()) return;
        if (ec) {
          // Out of descriptors (EMFILE) or memory: accepting again at once
          // would spin. Connections wait in the backlog meanwhile.
          accept_retry.expires_after(std::chrono::milliseconds(50));
          accept_retry.async_wait([this](boost::system::error_code wait_ec) {
            if (!wait_ec && !stopping) accept();
          });
          return;
        }
        try {
          start_session(std::move(socket));
        } catch (const std::exception& e) {  // out of memory: drop this one connection
          log_line(std::string("blur-collector: a connection could not start: ") +
                   printable(e.what()));
        }
        accept();
      });
}

void Server::Impl::start_session(net::ip::tcp::socket socket) {
  boost::system::error_code ec;
  const net::ip::tcp::endpoint remote = socket.remote_endpoint(ec);
  if (ec) return;  // gone already (reset before it was accepted)
  const uint64_t source = source_key(remote.address());
  const Admission admission = admit(source);
  if (admission == Admission::kDrop) return;  // a flood: the socket closes here
  socket.set_option(net::ip::tcp::no_delay(true), ec);  // small request/answer pairs
  std::string peer = endpoint_text(remote);
  if (tls) {
    using Stream = beast::ssl_stream<net::ip::tcp::socket>;
    auto session = std::make_shared<Session<Stream>>(*this, Stream(std::move(socket), *tls),
                                                     std::move(peer), admission, source);
    add_session(session, admission, source);
    session->start();
  } else {
    auto session = std::make_shared<Session<net::ip::tcp::socket>>(
        *this, std::move(socket), std::move(peer), admission, source);
    add_session(session, admission, source);
    session->start();
  }
}

void Server::Impl::sweep() {
  sweep_timer.expires_after(sweep_period);
  sweep_timer.async_wait([this](boost::system::error_code ec) {
    // Cancelled, or expired just as the server stopped (then cancel() found
    // the completion already queued): either way, no new sweep.
    if (ec || sweep_stopped) return;
    const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
    std::vector<std::shared_ptr<SessionBase>> late;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto& [pointer, weak] : sessions) {
        // `pointer` is alive while registered: ~Session unregisters under
        // this mutex before anything of it is destroyed.
        if (pointer->deadline.load(std::memory_order_relaxed) > now) continue;
        if (auto session = weak.lock()) late.push_back(std::move(session));
      }
    }
    for (auto& session : late) session->deadline_passed();
    sweep();
  });
}

void Server::Impl::begin_stop(std::chrono::milliseconds deadline) {
  boost::system::error_code ec;
  acceptor.close(ec);
  accept_retry.cancel();
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [pointer, weak] : sessions) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
  }
  for (auto& session : live) session->begin_stop();
  stop_deadline = std::chrono::steady_clock::now() + deadline;
  watch_stop();
}

// Polls until the connections are gone (then the io_context runs out of
// work and run() returns), closing the rest at the deadline. A connection
// whose Reply is held elsewhere has no pending operation, so polling, not
// waiting on operations, decides when to end.
void Server::Impl::watch_stop() {
  stop_timer.expires_after(std::chrono::milliseconds(10));
  stop_timer.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    if (session_count() == 0) {
      sweep_stopped = true;  // on this strand, like the sweep
      sweep_timer.cancel();  // the last pending work: run() returns
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= stop_deadline) {
      if (!forced_close) {
        forced_close = true;
        std::vector<std::shared_ptr<SessionBase>> live;
        {
          std::lock_guard<std::mutex> lock(mutex);
          for (auto& [pointer, weak] : sessions) {
            if (auto session = weak.lock()) live.push_back(std::move(session));
          }
        }
        for (auto& session : live) session->force_close();
      } else if (now >= stop_deadline + std::chrono::milliseconds(200)) {
        // Only connections waiting for a Reply held elsewhere remain.
        io.stop();
        return;
      }
    }
    watch_stop();
  });
}

Server::Server(Options options) : impl_(std::make_shared<Impl>(std::move(options))) {}

Server::~Server() {
  stop(std::chrono::milliseconds(0));
  std::unique_lock<std::mutex> lock(impl_->mutex);
  impl_->run_finished.wait(lock, [this] { return impl_->running_threads == 0; });
}

void Server::route(std::string method, std::string path_regex, RouteLimits limits, Handler handler,
                   std::string name) {
  Route route;
  route.name = name.empty() ? path_regex : std::move(name);
  route.method = std::move(method);
  route.literal = !has_regex_syntax(path_regex);
  if (!route.literal) route.pattern = std::regex(path_regex);
  route.pattern_text = std::move(path_regex);
  route.limits = std::move(limits);
  route.handler = std::move(handler);
  impl_->routes.push_back(std::move(route));
}

bool Server::start(std::string* error) {
  Impl& impl = *impl_;
  const Options& options = impl.options;
  if (options.tls_certificate_file.empty() != options.tls_key_file.empty()) {
    *error = "a TLS certificate needs its key, and a key its certificate";
    return false;
  }
  if (options.max_connections == 0 || options.max_connections_per_address == 0 ||
      options.max_connections_per_device == 0) {
    *error = "max_connections, max_connections_per_address and max_connections_per_device must "
             "be at least 1";
    return false;
  }
  impl.max_connections = connection_cap(options.max_connections);
  impl.max_per_source = std::min(options.max_connections_per_address, impl.max_connections);
  if (impl.max_connections < options.max_connections) {
    log_line("blur-collector: serving at most " + std::to_string(impl.max_connections) +
             " connections at once, not " + std::to_string(options.max_connections) +
             ", to fit the open-file limit (raise ulimit -n for more)");
  }
  boost::system::error_code ec;
  if (!options.tls_certificate_file.empty()) {
    impl.tls.emplace(net::ssl::context::tls_server);
    impl.tls->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                              net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                              net::ssl::context::no_tlsv1_1,
                          ec);
    if (!ec) impl.tls->use_certificate_chain_file(options.tls_certificate_file, ec);
    if (!ec) impl.tls->use_private_key_file(options.tls_key_file, net::ssl::context::pem, ec);
    if (ec) {
      *error = "cannot load the TLS certificate " + options.tls_certificate_file + " or key " +
               options.tls_key_file + ": " + ec.message();
      return false;
    }
    if (!options.tls_client_ca_file.empty()) {
      ec = ask_for_client_certificates(*impl.tls, options.tls_client_ca_file);
      if (ec) {
        *error = "cannot load the client CA " + options.tls_client_ca_file + ": " + ec.message();
        return false;
      }
    }
  } else if (!options.tls_client_ca_file.empty()) {
    *error = "a client CA needs HTTPS (a TLS certificate and key)";
    return false;
  }
  if (!options.tls_client_crl_file.empty()) {
    if (options.tls_client_ca_file.empty()) {
      *error = "a client CRL needs a client CA (mutual TLS)";
      return false;
    }
    if (auto loaded = impl.load_client_crl(); !loaded) {
      *error = "cannot use the client CRL: " + loaded.error().message;
      return false;
    }
  }
  const auto address = net::ip::make_address(options.address, ec);
  if (ec) {
    *error = "not an IP address: " + options.address;
    return false;
  }
  const net::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(options.port));
  impl.acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor.bind(endpoint, ec);
  if (!ec) impl.acceptor.listen(net::socket_base::max_listen_connections, ec);  // SOMAXCONN
  if (ec) {
    *error = "cannot listen on " + options.address + ":" + std::to_string(options.port) + ": " +
             ec.message();
    boost::system::error_code ignored;
    impl.acceptor.close(ignored);
    return false;
  }
  impl.port = impl.acceptor.local_endpoint(ec).port();
  impl.started = true;
  // Deadlines are checked every sweep period: at most this late.
  const auto shortest = std::min({options.header_timeout, options.body_timeout,
                                  options.idle_timeout});
  impl.sweep_period = std::clamp(shortest / 8, std::chrono::milliseconds(5),
                                 std::chrono::milliseconds(100));
  net::post(impl.control, [&impl] {
    if (impl.stopping) return;
    impl.accept();
    impl.sweep();
  });
  return true;
}

int Server::port() const { return impl_->port; }

std::size_t Server::open_connections() const { return impl_->session_count(); }

std::size_t Server::max_connections() const { return impl_->max_connections; }

std::size_t Server::max_connections_per_address() const { return impl_->max_per_source; }

std::size_t Server::open_sources() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->per_source.keys();
}

std::vector<std::string> Server::route_names() const {
  std::vector<std::string> names;
  for (const Route& route : impl_->routes) {
    if (std::find(names.begin(), names.end(), route.name) == names.end()) {
      names.push_back(route.name);
    }
  }
  return names;
}

std::vector<std::pair<std::string, std::string>> Server::routes() const {
  std::vector<std::pair<std::string, std::string>> routes;
  for (const Route& route : impl_->routes) routes.emplace_back(route.method, route.name);
  return routes;
}

void Server::run() {
  Impl& impl = *impl_;
  if (!impl.started) return;
  {
    std::lock_guard<std::mutex> lock(impl.mutex);
    ++impl.running_threads;
  }
  auto loop = [&impl] {
    for (;;) {
      try {
        impl.io.run();
        return;
      } catch (const std::exception& e) {  // a bug; keep serving the others
        log_line(std::string("blur-collector: error in the I/O loop: ") + printable(e.what()));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 1; i < impl.options.threads; ++i) threads.emplace_back(loop);
  loop();
  for (auto& thread : threads) thread.join();
  std::lock_guard<std::mutex> lock(impl.mutex);
  --impl.running_threads;
  impl.run_finished.notify_all();
}

void Server::stop(std::chrono::milliseconds deadline) {
  Impl& impl = *impl_;
  if (impl.stopping.exchange(true)) return;
  if (deadline.count() < 0) deadline = std::chrono::milliseconds(0);
  net::post(impl.control, [&impl, deadline] { impl.begin_stop(deadline); });
}

}  // namespace blur::collector::http
