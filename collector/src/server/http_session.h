// Internal to the HTTP server: one connection, plain (tcp::socket) or TLS
// (beast::ssl_stream<tcp::socket>). Everything a Session does runs on its
// strand; nothing blocks but the handler it calls.
//
//   [TLS handshake] -> idle (keep-alive: wait for bytes, idle_timeout)
//   -> header (header_timeout) -> route, Content-Type, Content-Length checks
//   -> [100 Continue] -> body (body_timeout, the route's body limit)
//   -> handler -> answer (body_timeout) -> idle again, or close.
//
// The bytes are read with async_read_some and given to Beast's parser with
// put(), synchronously: a request that arrives whole is parsed and handed to
// its handler in the completion of one read. Deadlines are a timestamp per
// connection that the server's sweeper checks (SessionBase::deadline).
//
// An answer sent before the body was read (refusals) closes the connection,
// after a short "lingering" read so that the client's unread upload does
// not reset the connection before it has read the answer.
//
// A connection past Options::max_connections (or its source's
// max_connections_per_address) is a refusal: [TLS handshake] -> 503
// "overloaded" ("source_connections") at once, nothing of its request read
// -> linger, close. A served connection whose client certificate names a
// device holding max_connections_per_device already gets the same 503
// "source_connections" right after its handshake.
#ifndef BLUR_COLLECTOR_SERVER_HTTP_SESSION_H
#define BLUR_COLLECTOR_SERVER_HTTP_SESSION_H

#include <algorithm>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "server/client_identity.h"
#include "server/http_server_impl.h"
#include "server/http_text.h"
#include "server/json_response.h"

namespace blur::collector::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// After an early refusal: read (and drop) at most this much of the rest of
// the upload, for at most this long, before closing.
constexpr std::size_t kLingerBytes = 1 << 20;
constexpr std::chrono::milliseconds kLingerTime{1000};
constexpr std::chrono::milliseconds kTlsShutdownTime{1000};
// A refusal's TLS handshake and answer: a client slower than this is
// closed unanswered (it holds one of the refusals in flight meanwhile).
constexpr std::chrono::milliseconds kRefusalTime{1000};
// Longer paths are refused (414) before any regex sees them: libstdc++'s
// regex matcher recurses per character.
constexpr std::size_t kMaxPathBytes = 2048;
constexpr std::size_t kReadSize = 16 * 1024;

inline std::string_view std_view(beast::string_view text) { return {text.data(), text.size()}; }

inline std::int64_t ticks_from_now(std::chrono::milliseconds duration) {
  return (std::chrono::steady_clock::now() + duration).time_since_epoch().count();
}

inline Response internal_error(const std::string& message) {
  Response response = error_response(500, message);
  response.refusal = "internal";
  return response;
}

// Holds one request's Reply. Whichever comes first, the Reply's call or
// the destruction of its last copy, answers; the other does nothing.
class ReplyState {
 public:
  explicit ReplyState(std::shared_ptr<SessionBase> session) : session_(std::move(session)) {}
  ReplyState(const ReplyState&) = delete;
  ReplyState& operator=(const ReplyState&) = delete;
  ~ReplyState() {
    if (!done_.load()) send(internal_error("the request was dropped without an answer"));
  }
  void send(Response response) noexcept {
    if (done_.exchange(true)) return;  // exactly once
    try {
      session_->deliver(std::move(response));
    } catch (...) {  // out of memory: the stop deadline closes the connection
      log_line("blur-collector: an answer could not be queued");
    }
  }

 private:
  std::shared_ptr<SessionBase> session_;
  std::atomic<bool> done_{false};
};

template <class Stream>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, net::ip::tcp::socket>;

 public:
  // `admission`: kServe, or a refusal (answer 503 and close). `source`:
  // the key its source address counts under (source_key()).
  Session(Server::Impl& server, Stream stream, std::string peer,
          Server::Impl::Admission admission, uint64_t source)
      : server_(server),
        stream_(std::move(stream)),
        buffer_(server.options.max_header_bytes + 2 * kReadSize),
        peer_(std::move(peer)),
        admission_(admission),
        refusal_(admission != Server::Impl::Admission::kServe),
        source_(source) {}
  ~Session() override {
    server_.remove_session(this, refusal_, source_,
                           device_counted_ ? client_device_nonce_ : std::nullopt);
  }

  // Call once, after add_session().
  void start() {
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->on_start(); });
  }
  void begin_stop() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->on_stop(); });
  }
  void force_close() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] { self->close_now(); });
  }
  // dispatch: a handler that answers before returning (on this strand) has
  // its answer written at once; another thread's answer is posted.
  void deliver(Response response) override {
    net::dispatch(stream_.get_executor(),
                  [self = this->shared_from_this(), response = std::move(response)]() mutable {
                    self->write_answer(std::move(response));
                  });
  }
  void deadline_passed() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      // The phase may have changed since the sweeper looked.
      if (self->deadline.load(std::memory_order_relaxed) <=
          std::chrono::steady_clock::now().time_since_epoch().count()) {
        self->close_now();
      }
    });
  }

 private:
  enum class State { kHandshake, kIdle, kHeader, kBody, kHandling, kWriting, kClosing, kClosed };

  net::ip::tcp::socket& socket() { return beast::get_lowest_layer(stream_); }
  const Server::Options& options() const { return server_.options; }
  void set_deadline(std::chrono::milliseconds from_now) {
    deadline.store(ticks_from_now(from_now), std::memory_order_relaxed);
  }
  void clear_deadline() { deadline.store(kNoDeadline, std::memory_order_relaxed); }

  void on_start() {
    if (server_.stopping) return close_now();
    // A new connection has header_timeout for its handshake and first
    // header, from now: nothing the client sends moves this deadline.
    set_deadline(refusal_ ? std::min(kRefusalTime, options().header_timeout)
                          : options().header_timeout);
    if constexpr (kTls) {
      state_ = State::kHandshake;
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (self->state_ == State::kClosed) return;
                                if (ec) return self->close_now();
                                // Once per connection: a client certificate
                                // cannot change after the handshake.
                                self->client_device_nonce_ =
                                    verified_device_nonce(self->stream_.native_handle());
                                if (self->client_device_nonce_ && !self->refusal_) {
                                  self->device_counted_ =
                                      self->server_.add_device(*self->client_device_nonce_);
                                  if (!self->device_counted_) return self->refuse_device();
                                }
                                self->begin();
                              });
    } else {
      begin();
    }
  }

  void begin() {
    if (!refusal_) return start_request(false);
    // Whatever the client sends is left unread: close after lingering.
    body_unread_ = true;
    if (admission_ == Server::Impl::Admission::kRefuseSource) {
      return refuse(503,
                    "this address holds the server's limit of " +
                        std::to_string(server_.max_per_source) +
                        " connections per address; retry later",
                    "source_connections");
    }
    refuse(503,
           "the server is at its limit of " + std::to_string(server_.max_connections) +
               " connections; retry later",
           "overloaded");
  }

  // The device of the client certificate holds its connections already.
  void refuse_device() {
    body_unread_ = true;
    refuse(503,
           "this device holds the server's limit of " +
               std::to_string(options().max_connections_per_device) +
               " connections per device; retry later",
           "source_connections");
  }

  void on_stop() {
    stopping_ = true;
    if (state_ == State::kHandshake || state_ == State::kIdle || state_ == State::kHeader) {
      close_now();
    }
    // A request being read or handled finishes; its answer closes.
  }

  // `idle`: a keep-alive connection between requests, which gets
  // idle_timeout until its next request's first bytes, then header_timeout.
  void start_request(bool idle) {
    if (stopping_ || server_.stopping) return close_now();
    request_ = Request{};
    request_.client_device_nonce = client_device_nonce_;
    started_.reset();
    body_unread_ = false;
    keep_alive_ = false;
    version_ = 11;
    route_ = nullptr;
    body_parser_.reset();
    header_parser_.emplace();
    header_parser_->header_limit(static_cast<std::uint32_t>(std::min<std::size_t>(
        options().max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    // The header parser takes any Content-Length: the route's limit is
    // checked once the route is known (and set on the body parser).
    header_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    if (idle && buffer_.size() == 0) {
      state_ = State::kIdle;
      set_deadline(options().idle_timeout);
    } else {
      if (idle) set_deadline(options().header_timeout);  // pipelined: bytes already here
      state_ = State::kHeader;
    }
    parse_header();
  }

  // Reads into buffer_, then calls `next` (on the strand) with the read's
  // error; end of stream is an error (net::error::eof).
  template <class Next>
  void read_some(Next next) {
    const std::size_t room = buffer_.max_size() - buffer_.size();
    if (room == 0) return on_read_error(bhttp::error::buffer_overflow);
    stream_.async_read_some(
        buffer_.prepare(std::min(room, kReadSize)),
        [self = this->shared_from_this(), next](beast::error_code ec, std::size_t n) {
          if (self->state_ == State::kClosed) return;
          self->buffer_.commit(n);
          (self.get()->*next)(ec);
        });
  }

  void on_header_data(beast::error_code ec) {
    if (ec) return on_read_error(ec);
    if (state_ == State::kIdle) {  // the next request has begun
      state_ = State::kHeader;
      set_deadline(options().header_timeout);
    }
    parse_header();
  }

  void parse_header() {
    if (buffer_.size() > 0) {
      if (!started_) started_ = std::chrono::steady_clock::now();
      beast::error_code ec;
      const std::size_t used = header_parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (!ec) return on_header();
      if (ec != bhttp::error::need_more) return on_read_error(ec);
    }
    read_some(&Session::on_header_data);
  }

  void on_read_error(beast::error_code ec) {
    // Whatever the client was sending is not read to its end.
    body_unread_ = true;
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      if (state_ != State::kBody) {
        return refuse(
            431,
            "the request header exceeds " + std::to_string(options().max_header_bytes) + " bytes",
            "too_large");
      }
    }
    if (ec == bhttp::error::body_limit) return refuse_body_too_large();
    if (ec.category() == make_error_code(bhttp::error::end_of_stream).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      // A framing error (bad Content-Length, bad chunk, bad method, ...):
      // Beast's message is fixed text, none of the request's bytes.
      return refuse(400, "malformed HTTP request: " + ec.message(), "malformed");
    }
    close_now();  // end of stream, reset, or closed (deadline, stop())
  }

  void on_header() {
    const auto& header = header_parser_->get();
    version_ = header.version() == 10 ? 10 : 11;
    keep_alive_ = header.keep_alive();
    body_unread_ = !header_parser_->is_done();
    request_.method = std::string(header.method_string());
    request_.peer = peer_;
    for (const auto& field : header) {
      request_.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request_.content_type = std::string(header[bhttp::field::content_type]);

    Target target;
    std::string error;
    if (!parse_target(std_view(header.target()), &target, &error)) {
      return refuse(400, error, "malformed");
    }
    if (target.path.size() > kMaxPathBytes) {
      return refuse(414, "the request path exceeds " + std::to_string(kMaxPathBytes) + " bytes",
                    "too_large");
    }
    request_.path = std::move(target.path);
    request_.query = std::move(target.query);

    const Route* route = nullptr;
    std::string allow;
    Server::Impl::RouteMatch match;
    try {
      match = server_.find_route(request_.method, request_.path, &route, &request_.path_params,
                                 &allow);
    } catch (const std::exception&) {  // std::regex_error: too complex to match
      return refuse(400, "the request path cannot be matched", "malformed");
    }
    if (match == Server::Impl::RouteMatch::kNoPath) {
      return refuse(404, "no such resource", "not_found");
    }
    if (match == Server::Impl::RouteMatch::kWrongMethod) {
      Response response = error_response(405, "method not allowed; allowed: " + allow);
      response.headers.emplace_back("Allow", allow);
      response.refusal = "method_not_allowed";
      return answer(std::move(response));
    }
    route_ = route;

    const RouteLimits& limits = route->limits;
    if (!limits.content_types.empty()) {
      const std::string type = media_type(request_.content_type);
      bool accepted = false;
      std::string names;
      for (const std::string& t : limits.content_types) {
        accepted = accepted || type == t;
        names += (names.empty() ? "" : ", ") + t;
      }
      if (!accepted) return refuse(415, "Content-Type must be " + names, "bad_content_type");
    }
    if (header_parser_->is_done()) return handle();  // no body

    const auto length = header_parser_->content_length();
    if (length && *length > limits.max_body_bytes) return refuse_body_too_large();

    const bool expects_continue = beast::iequals(header[bhttp::field::expect], "100-continue");
    state_ = State::kBody;
    set_deadline(options().body_timeout);
    body_parser_.emplace(std::move(*header_parser_));  // `header` is gone from here on
    header_parser_.reset();
    body_parser_->eager(true);
    // Enforced while reading, for chunked bodies too: a chunk past the
    // limit ends the read with error::body_limit.
    body_parser_->body_limit(limits.max_body_bytes);
    if (expects_continue && buffer_.size() == 0) {
      // The client waits for this before sending the body.
      continue_ = bhttp::response<bhttp::empty_body>(bhttp::status::continue_, version_);
      return bhttp::async_write(stream_, continue_,
                                [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                                  if (self->state_ == State::kClosed) return;
                                  if (ec) return self->close_now();
                                  self->parse_body();
                                });
    }
    parse_body();
  }

  void on_body_data(beast::error_code ec) {
    if (ec) return on_read_error(ec);  // end of stream before the end of the body: closed
    parse_body();
  }

  void parse_body() {
    while (buffer_.size() > 0 && !body_parser_->is_done()) {
      beast::error_code ec;
      const std::size_t used = body_parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == bhttp::error::need_more) break;
      if (ec) return on_read_error(ec);
    }
    if (!body_parser_->is_done()) return read_some(&Session::on_body_data);
    request_.body = body_parser_->release().body();
    body_parser_.reset();
    body_unread_ = false;
    handle();
  }

  void refuse_body_too_large() {
    std::string size;
    boost::optional<std::uint64_t> length;
    if (header_parser_) length = header_parser_->content_length();
    if (body_parser_) length = body_parser_->content_length();
    if (length) size = " of " + std::to_string(*length) + " bytes";
    refuse(400,
           "body" + size + " exceeds " + route_->limits.body_limit_name + " (" +
               std::to_string(route_->limits.max_body_bytes) + " bytes)",
           "too_large");
  }

  // An answer before (or instead of) the handler.
  // `reason`: the Response::refusal token.
  void refuse(int status, const std::string& message, const char* reason) {
    Response response = error_response(status, message);
    response.refusal = reason;
    answer(std::move(response));
  }
  void answer(Response response) {
    state_ = State::kHandling;
    write_answer(std::move(response));
  }

  void handle() {
    state_ = State::kHandling;
    clear_deadline();  // the handler takes its time; stop()'s deadline still applies
    std::shared_ptr<ReplyState> reply_state;
    try {
      if constexpr (kTls) {
        // Per request, not per connection: a keep-alive connection sees a
        // revocation as soon as the server has read the new CRL.
        if (client_device_nonce_ &&
            server_.certificate_revoked(SSL_get0_peer_certificate(stream_.native_handle()))) {
          request_.client_device_nonce.reset();
          request_.client_certificate_revoked = true;
        }
      }
      reply_state = std::make_shared<ReplyState>(this->shared_from_this());
      route_->handler(request_, [reply_state](Response response) {
        reply_state->send(std::move(response));
      });
    } catch (const std::exception& e) {
      log_line("blur-collector: the handler of " + printable(request_.method) + " " +
               printable(request_.path) + " threw: " + printable(e.what()));
      if (reply_state) reply_state->send(internal_error("internal error"));
    } catch (...) {
      log_line("blur-collector: the handler of " + printable(request_.method) + " " +
               printable(request_.path) + " threw");
      if (reply_state) reply_state->send(internal_error("internal error"));
    }
    if (!reply_state) {  // not even the reply could be made (out of memory)
      write_answer(internal_error("internal error"));
    }
  }

  static bool has_header(const Response& response, beast::string_view name) {
    return std::any_of(response.headers.begin(), response.headers.end(),
                       [name](const auto& header) { return beast::iequals(header.first, name); });
  }

  static bool safe_header_text(const std::string& text) {
    return text.find_first_of(std::string("\r\n\0", 3)) == std::string::npos;
  }

  void write_answer(Response response) {
    if (state_ != State::kHandling) return;  // closed meanwhile (stop deadline)
    state_ = State::kWriting;
    if (response.status < 100 || response.status > 599) {
      response = internal_error("the handler gave an invalid status");
    }
    const std::string request_id = request_id_text(Server::Impl::next_request_id());
    response.headers.emplace_back("X-Request-Id", request_id);
    if (response.status == 503 && !has_header(response, "Retry-After")) {
      response.headers.emplace_back("Retry-After", std::to_string(options().retry_after.count()));
    }
    report_completion(response, request_id);
    keep_alive_ = keep_alive_ && !body_unread_ && !stopping_ && !server_.stopping;
    response_ = {};
    response_.version(version_);
    response_.result(static_cast<unsigned>(response.status));
    if (safe_header_text(response.content_type)) {
      response_.set(bhttp::field::content_type, response.content_type);
    }
    for (const auto& [name, value] : response.headers) {
      if (!name.empty() && safe_header_text(name) && safe_header_text(value)) {
        response_.insert(name, value);
      }
    }
    response_.body() = std::move(response.body);
    response_.keep_alive(keep_alive_);
    response_.prepare_payload();
    set_deadline(options().body_timeout);
    bhttp::async_write(stream_, response_,
                       [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                         if (self->state_ == State::kClosed) return;
                         if (ec) return self->close_now();
                         self->response_ = {};  // free the body
                         if (self->keep_alive_) return self->start_request(true);
                         self->close_after_answer();
                       });
  }

  static std::string request_id_text(uint64_t id) {
    static const char kHex[] = "0123456789abcdef";
    std::string text(16, '0');
    for (int i = 15; i >= 0; --i, id >>= 4) text[static_cast<std::size_t>(i)] = kHex[id & 15];
    return text;
  }

  void report_completion(const Response& response, std::string_view request_id) noexcept {
    if (!options().on_complete) return;
    const auto now = std::chrono::steady_clock::now();
    Completion completion;
    completion.method = request_.method;
    completion.route = route_ != nullptr ? std::string_view(route_->name) : std::string_view();
    completion.status = response.status;
    completion.latency = now - started_.value_or(now);
    completion.request_id = request_id;
    completion.response = &response;
    try {
      options().on_complete(completion);
    } catch (...) {  // a log line or a metric lost; the answer goes out
    }
  }

  void close_after_answer() {
    state_ = State::kClosing;
    if constexpr (kTls) {
      // close_notify, then close; a client that does not answer it gets
      // kTlsShutdownTime.
      set_deadline(kTlsShutdownTime);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        self->close_now();
      });
    } else {
      beast::error_code ec;
      socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
      if (!body_unread_) return close_now();
      // Closing with unread data would reset the connection, and a client
      // still sending could lose the answer: read a little more first.
      set_deadline(kLingerTime);
      linger_buffer_.resize(kReadSize);
      linger();
    }
  }

  void linger() {
    stream_.async_read_some(net::buffer(linger_buffer_), [self = this->shared_from_this()](
                                                             beast::error_code ec, std::size_t n) {
      if (self->state_ == State::kClosed) return;
      self->lingered_ += n;
      if (ec || self->lingered_ >= kLingerBytes) return self->close_now();
      self->linger();
    });
  }

  void close_now() {
    if (state_ == State::kClosed) return;
    state_ = State::kClosed;
    clear_deadline();
    beast::error_code ec;
    socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
    socket().close(ec);  // cancels what is pending; those handlers see kClosed
  }

  Server::Impl& server_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::string peer_;
  const Server::Impl::Admission admission_;
  const bool refusal_;
  const uint64_t source_;
  std::optional<uint64_t> client_device_nonce_;  // from a verified client certificate
  bool device_counted_ = false;  // in the server's per-device counts (add_device())
  State state_ = State::kHeader;
  bool stopping_ = false;
  bool keep_alive_ = false;
  bool body_unread_ = false;  // an answer before the body: close after it
  unsigned version_ = 11;
  const Route* route_ = nullptr;
  Request request_;
  // The request's first byte arrived (for Completion::latency).
  std::optional<std::chrono::steady_clock::time_point> started_;
  std::optional<bhttp::request_parser<bhttp::empty_body>> header_parser_;
  std::optional<bhttp::request_parser<bhttp::string_body>> body_parser_;
  bhttp::response<bhttp::empty_body> continue_;
  bhttp::response<bhttp::string_body> response_;
  std::vector<char> linger_buffer_;
  std::size_t lingered_ = 0;
};

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_HTTP_SESSION_H
