// Internal to the HTTP server: one connection, plain (beast::tcp_stream) or
// TLS (beast::ssl_stream<beast::tcp_stream>). Everything a Session does runs
// on its strand; nothing blocks but the handler it calls.
//
//   [TLS handshake] -> idle (keep-alive: wait for a first byte, idle_timeout)
//   -> header (header_timeout) -> route, Content-Type, Content-Length checks
//   -> [100 Continue] -> body (body_timeout, the route's body limit)
//   -> handler -> answer (body_timeout) -> idle again, or close.
//
// An answer sent before the body was read (refusals) closes the connection,
// after a short "lingering" read so that the client's unread upload does
// not reset the connection before it has read the answer.
#ifndef BLUR_COLLECTOR_SERVER_HTTP_SESSION_H
#define BLUR_COLLECTOR_SERVER_HTTP_SESSION_H

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

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
// Longer paths are refused (414) before any regex sees them: libstdc++'s
// regex matcher recurses per character.
constexpr std::size_t kMaxPathBytes = 2048;

inline std::string_view std_view(beast::string_view text) { return {text.data(), text.size()}; }

// Holds one request's Reply. Whichever comes first, the Reply's call or
// the destruction of its last copy, answers; the other does nothing.
class ReplyState {
 public:
  explicit ReplyState(std::shared_ptr<SessionBase> session) : session_(std::move(session)) {}
  ReplyState(const ReplyState&) = delete;
  ReplyState& operator=(const ReplyState&) = delete;
  ~ReplyState() {
    if (!done_.load()) send(error_response(500, "the request was dropped without an answer"));
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
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

 public:
  Session(Server::Impl& server, Stream stream, std::string peer)
      : server_(server),
        stream_(std::move(stream)),
        buffer_(server.options.max_header_bytes + 65536),
        peer_(std::move(peer)) {}
  ~Session() override { server_.remove_session(this); }

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
  void deliver(Response response) override {
    net::post(stream_.get_executor(),
              [self = this->shared_from_this(), response = std::move(response)]() mutable {
                self->write_answer(std::move(response));
              });
  }

 private:
  enum class State { kHandshake, kIdle, kHeader, kBody, kHandling, kWriting, kClosing, kClosed };

  beast::tcp_stream& tcp() { return beast::get_lowest_layer(stream_); }
  const Server::Options& options() const { return server_.options; }

  void on_start() {
    if (server_.stopping) return close_now();
    if constexpr (kTls) {
      state_ = State::kHandshake;
      tcp().expires_after(options().header_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (self->state_ == State::kClosed) return;
                                if (ec) return self->close_now();
                                self->read_header();
                              });
    } else {
      read_header();  // a new connection has header_timeout for its first header
    }
  }

  void on_stop() {
    stopping_ = true;
    if (state_ == State::kHandshake || state_ == State::kIdle || state_ == State::kHeader) {
      close_now();
    }
    // A request being read or handled finishes; its answer closes.
  }

  // Keep-alive: wait up to idle_timeout for the next request's first bytes,
  // then give its header header_timeout.
  void wait_for_request() {
    if (stopping_ || server_.stopping) return close_now();
    if (buffer_.size() > 0) return read_header();  // pipelined
    state_ = State::kIdle;
    tcp().expires_after(options().idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096), [self = this->shared_from_this()](
                                                       beast::error_code ec, std::size_t n) {
      if (self->state_ == State::kClosed) return;
      if (ec) return self->close_now();
      self->buffer_.commit(n);
      self->read_header();
    });
  }

  void read_header() {
    state_ = State::kHeader;
    request_ = Request{};
    body_unread_ = false;
    keep_alive_ = false;
    version_ = 11;
    header_parser_.emplace();
    header_parser_->header_limit(static_cast<std::uint32_t>(
        std::min<std::size_t>(options().max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
    // The header parser takes any Content-Length: the route's limit is
    // checked once the route is known (and set on the body parser).
    header_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    tcp().expires_after(options().header_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *header_parser_,
        [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
          if (self->state_ == State::kClosed) return;
          if (ec) return self->on_read_error(ec);
          self->on_header();
        });
  }

  void on_read_error(beast::error_code ec) {
    // Whatever the client was sending is not read to its end.
    body_unread_ = true;
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return refuse(431, "the request header exceeds " +
                             std::to_string(options().max_header_bytes) + " bytes");
    }
    if (ec == bhttp::error::body_limit) return refuse_body_too_large();
    if (ec.category() == make_error_code(bhttp::error::end_of_stream).category() &&
        ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message) {
      // A framing error (bad Content-Length, bad chunk, bad method, ...):
      // Beast's message is fixed text, none of the request's bytes.
      return refuse(400, "malformed HTTP request: " + ec.message());
    }
    close_now();  // end of stream, reset, timeout (slow client), or closed by stop()
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
    if (!parse_target(std_view(header.target()), &target, &error)) return refuse(400, error);
    if (target.path.size() > kMaxPathBytes) {
      return refuse(414, "the request path exceeds " + std::to_string(kMaxPathBytes) + " bytes");
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
      return refuse(400, "the request path cannot be matched");
    }
    if (match == Server::Impl::RouteMatch::kNoPath) return refuse(404, "no such resource");
    if (match == Server::Impl::RouteMatch::kWrongMethod) {
      Response response = error_response(405, "method not allowed; allowed: " + allow);
      response.headers.emplace_back("Allow", allow);
      return answer(std::move(response));
    }

    const RouteLimits& limits = route->limits;
    if (!limits.content_types.empty()) {
      const std::string type = media_type(request_.content_type);
      bool accepted = false;
      std::string names;
      for (const std::string& t : limits.content_types) {
        accepted = accepted || type == t;
        names += (names.empty() ? "" : ", ") + t;
      }
      if (!accepted) return refuse(415, "Content-Type must be " + names);
    }
    if (header_parser_->is_done()) return handle(*route);  // no body

    const auto length = header_parser_->content_length();
    if (length && *length > limits.max_body_bytes) return refuse_body_too_large(route);

    route_ = route;
    if (beast::iequals(header[bhttp::field::expect], "100-continue")) {
      // The client waits for this before sending the body.
      state_ = State::kWriting;
      continue_ = bhttp::response<bhttp::empty_body>(bhttp::status::continue_, version_);
      tcp().expires_after(options().body_timeout);
      return bhttp::async_write(stream_, continue_,
                                [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                                  if (self->state_ == State::kClosed) return;
                                  if (ec) return self->close_now();
                                  self->read_body();
                                });
    }
    read_body();
  }

  void read_body() {
    state_ = State::kBody;
    body_parser_.emplace(std::move(*header_parser_));
    header_parser_.reset();
    // Enforced while reading, for chunked bodies too: a chunk past the
    // limit ends the read with error::body_limit.
    body_parser_->body_limit(route_->limits.max_body_bytes);
    tcp().expires_after(options().body_timeout);
    bhttp::async_read(stream_, buffer_, *body_parser_,
                      [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                        if (self->state_ == State::kClosed) return;
                        if (ec) return self->on_read_error(ec);
                        self->request_.body = self->body_parser_->release().body();
                        self->body_parser_.reset();
                        self->body_unread_ = false;
                        self->handle(*self->route_);
                      });
  }

  void refuse_body_too_large(const Route* route = nullptr) {
    if (route == nullptr) route = route_;
    std::string size;
    const auto length = header_parser_ ? header_parser_->content_length()
                                       : body_parser_ ? body_parser_->content_length()
                                                      : boost::none;
    if (length) size = " of " + std::to_string(*length) + " bytes";
    refuse(400, "body" + size + " exceeds " + route->limits.body_limit_name + " (" +
                    std::to_string(route->limits.max_body_bytes) + " bytes)");
  }

  // An answer before (or instead of) the handler.
  void refuse(int status, const std::string& message) { answer(error_response(status, message)); }
  void answer(Response response) {
    state_ = State::kHandling;
    write_answer(std::move(response));
  }

  void handle(const Route& route) {
    state_ = State::kHandling;
    tcp().expires_never();  // the handler takes its time; stop()'s deadline still applies
    std::shared_ptr<ReplyState> reply_state;
    try {
      reply_state = std::make_shared<ReplyState>(this->shared_from_this());
      route.handler(request_, [reply_state](Response response) {
        reply_state->send(std::move(response));
      });
    } catch (const std::exception& e) {
      log_line("blur-collector: the handler of " + printable(request_.method) + " " +
               printable(request_.path) + " threw: " + printable(e.what()));
      if (reply_state) reply_state->send(error_response(500, "internal error"));
    } catch (...) {
      log_line("blur-collector: the handler of " + printable(request_.method) + " " +
               printable(request_.path) + " threw");
      if (reply_state) reply_state->send(error_response(500, "internal error"));
    }
    if (!reply_state) {  // not even the reply could be made (out of memory)
      write_answer(error_response(500, "internal error"));
    }
  }

  static bool safe_header_text(const std::string& text) {
    return text.find_first_of(std::string("\r\n\0", 3)) == std::string::npos;
  }

  void write_answer(Response response) {
    if (state_ != State::kHandling) return;  // closed meanwhile (stop deadline)
    state_ = State::kWriting;
    if (response.status < 100 || response.status > 599) {
      response = error_response(500, "the handler gave an invalid status");
    }
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
    tcp().expires_after(options().body_timeout);
    bhttp::async_write(stream_, response_,
                       [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                         if (self->state_ == State::kClosed) return;
                         if (ec) return self->close_now();
                         self->response_ = {};  // free the body
                         if (self->keep_alive_) return self->wait_for_request();
                         self->close_after_answer();
                       });
  }

  void close_after_answer() {
    state_ = State::kClosing;
    if constexpr (kTls) {
      // close_notify, then close; a client that does not answer it gets
      // kTlsShutdownTime.
      tcp().expires_after(kTlsShutdownTime);
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        self->close_now();
      });
    } else {
      beast::error_code ec;
      tcp().socket().shutdown(net::ip::tcp::socket::shutdown_send, ec);
      if (!body_unread_) return close_now();
      // Closing with unread data would reset the connection, and a client
      // still sending could lose the answer: read a little more first.
      tcp().expires_after(kLingerTime);
      linger_buffer_.resize(16384);
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
    beast::error_code ec;
    tcp().socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
    tcp().close();  // cancels what is pending; those handlers see kClosed
  }

  Server::Impl& server_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::string peer_;
  State state_ = State::kHeader;
  bool stopping_ = false;
  bool keep_alive_ = false;
  bool body_unread_ = false;  // an answer before the body: close after it
  unsigned version_ = 11;
  const Route* route_ = nullptr;
  Request request_;
  std::optional<bhttp::request_parser<bhttp::empty_body>> header_parser_;
  std::optional<bhttp::request_parser<bhttp::string_body>> body_parser_;
  bhttp::response<bhttp::empty_body> continue_;
  bhttp::response<bhttp::string_body> response_;
  std::vector<char> linger_buffer_;
  std::size_t lingered_ = 0;
};

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_HTTP_SESSION_H
