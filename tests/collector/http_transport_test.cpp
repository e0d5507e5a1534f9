// The HTTP transport (server/http_server.h) alone, with test routes, over
// raw sockets: routing, limits, keep-alive, many connections, slow clients,
// handlers that throw, answer late, from another thread or never, and
// stop() with its deadline.
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

#include "raw_http.h"
#include "server/json_response.h"

namespace {

using namespace blur::collector::http;
using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// The tests assert events and their order, never how fast they came: a wait
// for an event gives up only after kHungMs, which fails a hung test and
// nothing else (a busy CI machine is slow, not this slow). Lower bounds
// (closed no earlier than a deadline) stay: load only makes them truer.
constexpr int kHungMs = 30000;

// Polls `done` until it holds or kHungMs pass; its last value.
template <class Condition>
bool wait_until(Condition done) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(kHungMs);
  while (!done() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

// Short deadlines, for the tests about deadlines: slow clients are closed
// within a test's time.
void short_deadlines(Server::Options& options) {
  options.header_timeout = std::chrono::milliseconds(600);
  options.body_timeout = std::chrono::milliseconds(800);
  options.idle_timeout = std::chrono::milliseconds(1500);
}

class TransportFixture : public ::testing::Test {
 protected:
  // Deadlines far beyond any test's time unless `adjust` (applied last)
  // sets others (short_deadlines): on a busy machine a connection waiting
  // its turn is not closed by a deadline the test is not about.
  void start(int threads = 2, const std::function<void(Server::Options&)>& adjust = {}) {
    Server::Options options;
    options.port = 0;
    options.threads = threads;
    options.header_timeout = std::chrono::minutes(10);
    options.body_timeout = std::chrono::minutes(10);
    options.idle_timeout = std::chrono::minutes(10);
    options.max_header_bytes = 4096;
    if (adjust) adjust(options);
    server_ = std::make_unique<Server>(options);

    RouteLimits echo_limits;
    echo_limits.max_body_bytes = 1000;
    echo_limits.content_types = {"application/octet-stream"};
    server_->route("POST", "/echo", echo_limits, [](const Request& request, Reply reply) {
      reply(json_response(200, {{"size", request.body.size()}}));
    });
    server_->route("GET", "/ok", {}, [](const Request&, Reply reply) {
      reply(json_response(200, {{"ok", true}}));
    });
    server_->route("GET", R"(/items/(\d+)/(\w+))", {}, [](const Request& request, Reply reply) {
      reply(json_response(200, {{"params", request.path_params},
                                {"q", request.query_value("q").value_or("-")},
                                {"header", request.header("x-test")}}));
    });
    server_->route("GET", "/throw", {}, [](const Request&, Reply) {
      throw std::runtime_error("handler failed \xff");
    });
    server_->route("GET", "/drop", {}, [](const Request&, Reply) {});
    server_->route("GET", "/twice", {}, [](const Request&, Reply reply) {
      reply(json_response(200, {{"first", true}}));
      reply(json_response(201, {{"second", true}}));
    });
    // Answered from another thread, after `later_delay_`.
    server_->route("GET", "/later", {}, [this](const Request&, Reply reply) {
      std::lock_guard<std::mutex> lock(mutex_);
      workers_.emplace_back([reply, delay = later_delay_] {
        std::this_thread::sleep_for(delay);
        reply(json_response(200, {{"from", "another thread"}}));
      });
    });
    // Never answered until release_held() (a stuck back end).
    server_->route("GET", "/held", {}, [this](const Request&, Reply reply) {
      std::lock_guard<std::mutex> lock(mutex_);
      held_.push_back(std::move(reply));
    });

    std::string error;
    ASSERT_TRUE(server_->start(&error)) << error;
    port_ = server_->port();
    thread_ = std::thread([this] {
      server_->run();
      std::lock_guard<std::mutex> lock(mutex_);
      run_returned_ = Clock::now();
      returned_ = true;
      returned_changed_.notify_all();
    });
  }
  // True once run() has returned, waiting up to kHungMs for it.
  bool wait_run_returned() {
    std::unique_lock<std::mutex> lock(mutex_);
    return returned_changed_.wait_for(lock, std::chrono::milliseconds(kHungMs),
                                      [this] { return returned_; });
  }
  size_t held_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return held_.size();
  }
  void release_held() {
    std::lock_guard<std::mutex> lock(mutex_);
    held_.clear();  // destroyed unanswered: 500
  }
  void answer_held() {
    std::vector<Reply> held;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      held.swap(held_);
    }
    for (auto& reply : held) reply(json_response(200, {{"held", true}}));
  }
  void TearDown() override {
    if (server_) server_->stop(std::chrono::seconds(2));
    if (thread_.joinable()) thread_.join();
    release_held();
    for (auto& worker : workers_) worker.join();
  }

  std::unique_ptr<Server> server_;
  std::thread thread_;
  Clock::time_point run_returned_;
  bool returned_ = false;
  std::condition_variable returned_changed_;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<std::thread> workers_;
  std::vector<Reply> held_;
  std::chrono::milliseconds later_delay_{50};
};

TEST_F(TransportFixture, RoutesMethodsAndParameters) {
  start();
  auto answer = raw_http::exchange(port_, raw_http::get("/items/42/abc?q=a%20b+c", "X-Test: yes\r\n"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  const auto body = nlohmann::json::parse(answer->body);
  EXPECT_EQ(body["params"], nlohmann::json({"42", "abc"}));
  EXPECT_EQ(body["q"], "a b c");
  EXPECT_EQ(body["header"], "yes");

  answer = raw_http::exchange(port_, raw_http::get("/nothing"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 404);
  EXPECT_TRUE(nlohmann::json::parse(answer->body).contains("error"));
  answer = raw_http::exchange(port_, raw_http::get("/echo"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 405);
  EXPECT_EQ(answer->header("allow"), "POST");
  answer = raw_http::exchange(port_, raw_http::get("/" + std::string(3000, 'a')));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 414);
  answer = raw_http::exchange(port_, raw_http::get("/ok", "X-Big: " + std::string(5000, 'b') + "\r\n"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 431);
  answer = raw_http::exchange(port_, "GET http://elsewhere/ok HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 400);
}

TEST_F(TransportFixture, BodyLimitsAndContentTypes) {
  start();
  auto answer = raw_http::exchange(
      port_, raw_http::post("/echo", std::string(1000, 'x'), "application/octet-stream"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["size"], 1000);
  answer = raw_http::exchange(
      port_, raw_http::post("/echo", std::string(1001, 'x'), "application/octet-stream"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 400);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["error"],
            "body of 1001 bytes exceeds the body limit (1000 bytes)");
  // Chunked: 600 + 600 bytes passes the limit in the second chunk.
  const std::string chunked_head =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  const std::string chunk = "258\r\n" + std::string(600, 'c') + "\r\n";
  answer = raw_http::exchange(port_, chunked_head + chunk + chunk + "0\r\n\r\n");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 400);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["error"],
            "body exceeds the body limit (1000 bytes)");
  answer = raw_http::exchange(port_, chunked_head + chunk + "0\r\n\r\n");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["size"], 600);
  // Content-Length together with chunked is ambiguous framing.
  answer = raw_http::exchange(
      port_, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
             "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 400);
  answer = raw_http::exchange(port_, raw_http::post("/echo", "abc", "text/plain"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 415);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["error"],
            "Content-Type must be application/octet-stream");
}

// "Expect: 100-continue": the client waits for the interim answer before
// sending its body.
TEST_F(TransportFixture, ExpectContinue) {
  start();
  const int fd = raw_http::connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(raw_http::send_all(
      fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
          "Content-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  std::string pending;
  ASSERT_TRUE(raw_http::readable(fd, kHungMs));
  char buffer[256];
  const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buffer, static_cast<size_t>(n)), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(raw_http::send_all(fd, "abc"));
  const auto answer = raw_http::read_answer(fd, &pending);
  close(fd);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
}

TEST_F(TransportFixture, ThrowingHandlerGets500AndTheServerGoesOn) {
  start();
  const int fd = raw_http::connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string pending;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/throw")));
    auto answer = raw_http::read_answer(fd, &pending);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 500);
    EXPECT_EQ(nlohmann::json::parse(answer->body)["error"], "internal error");
    // The same connection goes on.
    ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/ok")));
    answer = raw_http::read_answer(fd, &pending);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 200);
  }
  close(fd);
}

TEST_F(TransportFixture, RepliesFromAnotherThreadLateTwiceOrNever) {
  start();
  const int fd = raw_http::connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string pending;
  ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/later")));
  auto answer = raw_http::read_answer(fd, &pending);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["from"], "another thread");
  // A Reply dropped unanswered is a 500, not a hung connection.
  ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/drop")));
  answer = raw_http::read_answer(fd, &pending);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 500);
  // Only the first of two calls answers; the next request gets its own.
  ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/twice") + raw_http::get("/ok")));
  answer = raw_http::read_answer(fd, &pending);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_TRUE(nlohmann::json::parse(answer->body)["first"]);
  answer = raw_http::read_answer(fd, &pending);
  ASSERT_TRUE(answer);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["ok"], true);
  // Many replies from other threads at once, on separate connections.
  std::vector<int> fds;
  for (int i = 0; i < 50; ++i) {
    fds.push_back(raw_http::connect_to(port_));
    ASSERT_TRUE(raw_http::send_all(fds.back(), raw_http::get("/later")));
  }
  for (int client : fds) {
    const auto late = raw_http::read_answer(client);
    ASSERT_TRUE(late);
    EXPECT_EQ(late->status, 200);
    close(client);
  }
  close(fd);
}

TEST_F(TransportFixture, HundredRequestsOnOneConnectionThenIdleTimeout) {
  start(2, short_deadlines);
  const int fd = raw_http::connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string pending;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/ok")));
    const auto answer = raw_http::read_answer(fd, &pending);
    ASSERT_TRUE(answer) << i;
    EXPECT_EQ(answer->status, 200);
    EXPECT_EQ(answer->header("connection"), "");  // HTTP/1.1 default: keep-alive
  }
  // Pipelined: ten requests in one write, ten answers in order.
  std::string ten;
  for (int i = 0; i < 10; ++i) ten += raw_http::get(i % 2 ? "/ok" : "/nothing");
  // The server's idle time starts after its last answer, so after this.
  const auto idle_since = Clock::now();
  ASSERT_TRUE(raw_http::send_all(fd, ten));
  for (int i = 0; i < 10; ++i) {
    const auto answer = raw_http::read_answer(fd, &pending);
    ASSERT_TRUE(answer) << i;
    EXPECT_EQ(answer->status, i % 2 ? 200 : 404);
  }
  // Idle past idle_timeout (1.5 s): closed, not before.
  EXPECT_TRUE(raw_http::closed_by_peer(fd, kHungMs));
  const long long idle_closed = ms_since(idle_since);
  std::printf("idle keep-alive connection closed after %lld ms\n", idle_closed);
  EXPECT_GE(idle_closed, 1450);
  close(fd);
}

// An event-driven server: 1,000 connections at once, each answered, with
// two I/O threads.
TEST_F(TransportFixture, ThousandSimultaneousConnections) {
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur < 2200) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 4096);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  ASSERT_GE(files.rlim_cur, 2200u) << "this test needs 2,200 file descriptors (ulimit -n)";
  // All from 127.0.0.1: a capacity test, not one of the per-address cap.
  start(2, [](Server::Options& options) { options.max_connections_per_address = 1000; });
  std::vector<int> fds;
  for (int i = 0; i < 1000; ++i) {
    const int fd = raw_http::connect_to(port_);
    ASSERT_GE(fd, 0) << "connection " << i;
    fds.push_back(fd);
  }
  for (int fd : fds) ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/ok")));
  int answered = 0;
  for (int fd : fds) {
    const auto answer = raw_http::read_answer(fd);
    answered += answer && answer->status == 200;
    close(fd);
  }
  EXPECT_EQ(answered, 1000);
}

// The listen backlog is SOMAXCONN, not 5: with no I/O thread accepting,
// 1,000 connections still complete their handshake (in the kernel's queue)
// at once; with a backlog of 5 the sixth would wait for SYN retries.
TEST(TransportBacklog, AThousandConnectionsWaitInTheQueue) {
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_cur < 1200) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, 4096);
    setrlimit(RLIMIT_NOFILE, &files);
  }
  ASSERT_GE(files.rlim_cur, 1200u) << "this test needs 1,200 file descriptors (ulimit -n)";
  Server::Options options;
  options.port = 0;
  Server server(options);
  std::string error;
  ASSERT_TRUE(server.start(&error)) << error;  // listening; run() is never called
  std::vector<int> fds;
  const auto start_time = Clock::now();
  for (int i = 0; i < 1000; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    // A connection past the backlog waits for an accept() that never comes:
    // connect() gives up after 10 s (SO_SNDTIMEO) and the test fails.
    timeval timeout{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(server.port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    fds.push_back(fd);
    ASSERT_TRUE(connected) << "connection " << i << " not queued: " << std::strerror(errno);
  }
  std::printf("1,000 connections queued without run() in %lld ms\n", ms_since(start_time));
  for (int fd : fds) close(fd);
}

// Slowloris: clients that drip a header (or a body) one byte at a time never
// hold the single I/O thread: with their deadlines ten minutes away, others
// are answered between their bytes while every slow one is still open (a
// server that waited on one would answer nobody until its deadline).
TEST_F(TransportFixture, SlowClientsDoNotBlockOthers) {
  start(1);  // deadlines ten minutes away
  const std::string header = raw_http::get("/ok");
  const std::string body_head =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: 100\r\n\r\n";
  std::vector<int> slow_header, slow_body, idle;
  for (int i = 0; i < 20; ++i) {
    slow_header.push_back(raw_http::connect_to(port_));
    slow_body.push_back(raw_http::connect_to(port_));
    ASSERT_TRUE(raw_http::send_all(slow_body.back(), body_head));
  }
  for (int i = 0; i < 100; ++i) idle.push_back(raw_http::connect_to(port_));
  long long slowest_other = 0;
  for (size_t byte = 0; byte < 10; ++byte) {
    for (size_t i = 0; i < slow_header.size(); ++i) {
      ASSERT_TRUE(raw_http::send_all(slow_header[i], header.substr(byte, 1))) << i;
      ASSERT_TRUE(raw_http::send_all(slow_body[i], "b")) << i;
    }
    const auto asked = Clock::now();
    const int other = raw_http::connect_to(port_);
    ASSERT_TRUE(raw_http::send_all(other, header));
    const auto other_answer = raw_http::read_answer(other, nullptr, kHungMs);
    close(other);
    ASSERT_TRUE(other_answer) << "another client was not answered meanwhile (byte " << byte << ")";
    EXPECT_EQ(other_answer->status, 200);
    slowest_other = std::max(slowest_other, ms_since(asked));
  }
  std::printf("others answered among 140 slow and silent clients within %lld ms\n",
              slowest_other);
  // None of the slow or silent ones was answered or closed meanwhile.
  for (const auto* fds : {&slow_header, &slow_body, &idle}) {
    for (int fd : *fds) {
      EXPECT_FALSE(raw_http::readable(fd, 0)) << "a slow client was answered or closed";
      close(fd);
    }
  }
}

// ... and they are closed at their deadlines although they keep sending
// (header_timeout 600 ms, body_timeout 800 ms), as are the silent ones.
TEST_F(TransportFixture, SlowClientsAreClosedAtTheirDeadlines) {
  start(1, short_deadlines);
  // Neither the header nor the body would end before max_header_bytes.
  const std::string header = "GET /ok HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(4000, 'a');
  const std::string body_head =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
      "Content-Length: 100000\r\n\r\n";
  std::vector<int> slow_header, slow_body;
  for (int i = 0; i < 20; ++i) {
    slow_header.push_back(raw_http::connect_to(port_));
    slow_body.push_back(raw_http::connect_to(port_));
    ASSERT_TRUE(raw_http::send_all(slow_body.back(), body_head));
  }
  std::vector<int> idle;
  for (int i = 0; i < 100; ++i) idle.push_back(raw_http::connect_to(port_));

  const auto start_time = Clock::now();
  std::vector<long long> header_closed(slow_header.size(), -1), body_closed(slow_body.size(), -1);
  auto all_closed = [&] {
    return std::count(header_closed.begin(), header_closed.end(), -1) == 0 &&
           std::count(body_closed.begin(), body_closed.end(), -1) == 0;
  };
  // Ten bytes a second each, until all are closed (or the test is hung).
  for (size_t byte = 0; !all_closed() && ms_since(start_time) < kHungMs; ++byte) {
    for (size_t i = 0; i < slow_header.size(); ++i) {
      // A write can still succeed just after the close; the reset fails the next.
      if (header_closed[i] < 0 &&
          !raw_http::send_all(slow_header[i], header.substr(byte % header.size(), 1))) {
        header_closed[i] = ms_since(start_time);
      }
      if (body_closed[i] < 0 && !raw_http::send_all(slow_body[i], "b")) {
        body_closed[i] = ms_since(start_time);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::printf("slow clients: header ones closed after %lld..%lld ms, body ones after %lld..%lld ms "
              "(-1: not closed)\n",
              *std::min_element(header_closed.begin(), header_closed.end()),
              *std::max_element(header_closed.begin(), header_closed.end()),
              *std::min_element(body_closed.begin(), body_closed.end()),
              *std::max_element(body_closed.begin(), body_closed.end()));
  for (size_t i = 0; i < slow_header.size(); ++i) {
    EXPECT_GE(header_closed[i], 0) << "a dripped header was never closed: " << i;
    EXPECT_GE(body_closed[i], 0) << "a dripped body was never closed: " << i;
    close(slow_header[i]);
    close(slow_body[i]);
  }
  // The silent ones are closed at the header deadline too.
  for (int fd : idle) {
    EXPECT_TRUE(raw_http::closed_by_peer(fd, kHungMs));
    close(fd);
  }
}

// Closed after how many ms (since `since`), if the peer closes `fd` within
// `limit_ms` while this sends it one byte of `text` every 100 ms; -1 if not.
long long drip_until_closed(int fd, const std::string& text, Clock::time_point since,
                            long long limit_ms) {
  for (size_t byte = 0; ms_since(since) < limit_ms; ++byte) {
    if (!raw_http::send_all(fd, text.substr(byte % text.size(), 1))) return ms_since(since);
    const auto sent = Clock::now();
    while (ms_since(sent) < 100) {
      if (!raw_http::readable(fd, static_cast<int>(100 - ms_since(sent)))) continue;
      char buffer[256];
      const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) return ms_since(since);
      // An answer (bytes) would be a bug; the caller's bounds see it.
    }
  }
  return -1;
}

// The header deadline runs from the connection's start (for a keep-alive
// connection, from its next request's first byte) and nothing the client
// sends moves it: a header dripped at ten bytes a second, which would
// never end, is closed at header_timeout (600 ms; the sweep checks every
// 75 ms), neither before nor long after.
TEST_F(TransportFixture, DrippedHeaderIsClosedAtTheHeaderDeadline) {
  // idle_timeout far from the 400 ms pause below, so only the header
  // deadline can close the keep-alive connection.
  start(1, [](Server::Options& options) {
    short_deadlines(options);
    options.idle_timeout = std::chrono::seconds(60);
  });
  const std::string endless = "GET /ok HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(4000, 'a');
  // Times taken before connecting: the server's deadline starts later.
  auto connected = Clock::now();
  int fd = raw_http::connect_to(port_);
  ASSERT_GE(fd, 0);
  const long long fresh = drip_until_closed(fd, endless, connected, kHungMs);
  close(fd);
  EXPECT_GE(fresh, 550) << "closed before header_timeout (-1: never closed)";

  // Keep-alive: a request answered, 400 ms idle, then a dripped header: its
  // deadline starts at its first byte (from the connection's start it would
  // close some 200 ms after that byte).
  connected = Clock::now();
  fd = raw_http::connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/ok")));
  const auto answer = raw_http::read_answer(fd);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const auto first_byte = Clock::now();
  const long long kept = drip_until_closed(fd, endless, first_byte, kHungMs);
  close(fd);
  std::printf("dripped headers closed after %lld ms (new connection), %lld ms (keep-alive)\n",
              fresh, kept);
  EXPECT_GE(kept, 550) << "(-1: never closed)";
  EXPECT_GE(ms_since(connected), 400 + 550);
}

// Past max_connections, a new connection is answered at once, before it
// sends anything: 503, Retry-After, a JSON error, "Connection: close", then
// closed; the refusal reaches the completion hook as "overloaded". Those
// served are unaffected, and once they close, new connections are served.
TEST_F(TransportFixture, ConnectionCapAnswers503AndRecovers) {
  struct Refusals {
    std::mutex mutex;
    std::vector<std::string> tokens;
  };
  auto refusals = std::make_shared<Refusals>();  // outlives the test body, as the hook may
  start(2, [refusals](Server::Options& options) {
    options.max_connections = 8;
    options.retry_after = std::chrono::seconds(3);
    // (No deadline can answer or close the silent ones: only the cap.)
    options.on_complete = [refusals](const Completion& completion) {
      std::lock_guard<std::mutex> lock(refusals->mutex);
      refusals->tokens.push_back(completion.response->refusal);
    };
  });
  ASSERT_EQ(server_->max_connections(), 8u);
  // Eight connections, each waiting on a held request (no deadline).
  std::vector<int> served;
  for (int i = 0; i < 8; ++i) {
    served.push_back(raw_http::connect_to(port_));
    ASSERT_GE(served.back(), 0);
    ASSERT_TRUE(raw_http::send_all(served.back(), raw_http::get("/held")));
  }
  ASSERT_TRUE(wait_until([this] { return held_count() == 8; })) << held_count();

  // Twenty more: ten silent, ten sending a request; all refused at once.
  for (int i = 0; i < 20; ++i) {
    const int fd = raw_http::connect_to(port_);
    ASSERT_GE(fd, 0);
    if (i % 2) {
      ASSERT_TRUE(raw_http::send_all(fd, raw_http::get("/ok")));
    }
    const auto answer = raw_http::read_answer(fd, nullptr, kHungMs);
    ASSERT_TRUE(answer) << i;
    EXPECT_EQ(answer->status, 503) << i;
    EXPECT_EQ(answer->header("retry-after"), "3") << i;
    EXPECT_EQ(answer->header("connection"), "close") << i;
    EXPECT_EQ(answer->header("content-type"), "application/json") << i;
    EXPECT_NE(nlohmann::json::parse(answer->body)["error"].get<std::string>().find(
                  "limit of 8 connections"),
              std::string::npos)
        << answer->body;
    EXPECT_TRUE(raw_http::closed_by_peer(fd, kHungMs)) << i;
    close(fd);
  }
  {
    std::lock_guard<std::mutex> lock(refusals->mutex);
    EXPECT_EQ(std::count(refusals->tokens.begin(), refusals->tokens.end(), "overloaded"), 20);
  }

  // The eight are still served: dropping their Replies answers them (500).
  release_held();
  for (int fd : served) {
    const auto answer = raw_http::read_answer(fd);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 500);
    close(fd);
  }
  EXPECT_TRUE(wait_until([this] { return server_->open_connections() == 0; }))
      << server_->open_connections();
  // Recovered: eight at once are served again.
  std::vector<int> again;
  for (int i = 0; i < 8; ++i) {
    again.push_back(raw_http::connect_to(port_));
    ASSERT_TRUE(raw_http::send_all(again.back(), raw_http::get("/ok")));
  }
  for (int fd : again) {
    const auto answer = raw_http::read_answer(fd);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 200);
    close(fd);
  }
}

// The per-address cap: one source address holding its limit of silent
// connections gets 503 "source_connections" (with Retry-After) for more, at
// once, while another address is served; the global cap still counts every
// connection; the accounting keeps one entry per address holding one, none
// once they close, and the address is served again.
TEST_F(TransportFixture, PerAddressCapKeepsOneAddressFromTakingEveryConnection) {
  struct Refusals {
    std::mutex mutex;
    std::vector<std::string> tokens;
  };
  auto refusals = std::make_shared<Refusals>();
  start(2, [refusals](Server::Options& options) {
    options.max_connections = 12;
    options.max_connections_per_address = 5;
    options.on_complete = [refusals](const Completion& completion) {
      std::lock_guard<std::mutex> lock(refusals->mutex);
      refusals->tokens.push_back(completion.response->refusal);
    };
  });
  ASSERT_EQ(server_->max_connections_per_address(), 5u);
  std::vector<int> silent;
  for (int i = 0; i < 5; ++i) {
    silent.push_back(raw_http::connect_to(port_, "127.0.0.2"));
    ASSERT_GE(silent.back(), 0) << "cannot connect from 127.0.0.2";
  }
  ASSERT_TRUE(wait_until([this] { return server_->open_connections() == 5; }))
      << server_->open_connections();
  EXPECT_EQ(server_->open_sources(), 1u);
  for (int i = 0; i < 10; ++i) {  // more from the same address: refused at once
    const int fd = raw_http::connect_to(port_, "127.0.0.2");
    ASSERT_GE(fd, 0);
    const auto answer = raw_http::read_answer(fd, nullptr, kHungMs);
    ASSERT_TRUE(answer) << i;
    EXPECT_EQ(answer->status, 503) << i;
    EXPECT_EQ(answer->header("retry-after"), "1") << i;
    EXPECT_NE(nlohmann::json::parse(answer->body)["error"].get<std::string>().find(
                  "limit of 5 connections per address"),
              std::string::npos)
        << answer->body;
    EXPECT_TRUE(raw_http::closed_by_peer(fd, kHungMs)) << i;
    close(fd);
  }
  // Others are served meanwhile, up to the global cap: 5 + 7 = 12.
  std::vector<int> others;
  for (int i = 0; i < 7; ++i) {
    others.push_back(raw_http::connect_to(port_, i % 2 ? "127.0.0.3" : "127.0.0.1"));
    ASSERT_TRUE(raw_http::send_all(others.back(), raw_http::get("/ok")));  // kept alive
    const auto answer = raw_http::read_answer(others.back());
    ASSERT_TRUE(answer) << i;
    EXPECT_EQ(answer->status, 200) << i;
  }
  EXPECT_EQ(server_->open_sources(), 3u);
  {
    const int fd = raw_http::connect_to(port_, "127.0.0.4");  // past the global cap
    const auto answer = raw_http::read_answer(fd, nullptr, kHungMs);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, 503);
    close(fd);
  }
  {
    std::lock_guard<std::mutex> lock(refusals->mutex);
    EXPECT_EQ(std::count(refusals->tokens.begin(), refusals->tokens.end(), "source_connections"),
              10);
    EXPECT_EQ(std::count(refusals->tokens.begin(), refusals->tokens.end(), "overloaded"), 1);
  }
  for (int fd : silent) close(fd);
  for (int fd : others) close(fd);
  EXPECT_TRUE(wait_until([this] { return server_->open_connections() == 0; }))
      << server_->open_connections();
  EXPECT_EQ(server_->open_sources(), 0u);  // no entry left behind
  const auto again = raw_http::exchange(port_, raw_http::get("/ok"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 200);
}

// stop(): idle and slow connections close while the request being handled
// is still held, that request is then answered (with "Connection: close"),
// and run() returns without waiting for the (hour-long) deadline.
TEST_F(TransportFixture, StopFinishesRequestsInFlightAndClosesTheRest) {
  start();
  const int in_flight = raw_http::connect_to(port_);
  const int slow = raw_http::connect_to(port_);
  const int idle = raw_http::connect_to(port_);
  ASSERT_TRUE(raw_http::send_all(in_flight, raw_http::get("/held")));
  ASSERT_TRUE(raw_http::send_all(slow, "GET /ok HTTP/1.1\r\nHo"));
  ASSERT_TRUE(raw_http::send_all(idle, raw_http::get("/ok")));
  ASSERT_TRUE(raw_http::read_answer(idle));  // now idle between requests
  ASSERT_TRUE(wait_until([this] { return held_count() == 1; }));

  const auto stop_time = Clock::now();
  server_->stop(std::chrono::hours(1));
  EXPECT_TRUE(raw_http::closed_by_peer(slow, kHungMs));
  EXPECT_TRUE(raw_http::closed_by_peer(idle, kHungMs));
  EXPECT_FALSE(raw_http::readable(in_flight, 0)) << "the request in flight was cut off";
  answer_held();
  const auto answer = raw_http::read_answer(in_flight, nullptr, kHungMs);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->header("connection"), "close");
  EXPECT_TRUE(raw_http::closed_by_peer(in_flight, kHungMs));
  ASSERT_TRUE(wait_run_returned()) << "run() waits for the stop deadline";
  std::printf("stop: run() returned %lld ms after stop() (deadline: an hour)\n",
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         run_returned_ - stop_time)
                                         .count()));
  thread_.join();
  // No longer accepting.
  EXPECT_LT(raw_http::connect_to(port_), 0);
  close(in_flight);
  close(slow);
  close(idle);
}

// A handler that never answers cannot hold stop() past its deadline: run()
// returns, not before the deadline, while the Reply is still held.
TEST_F(TransportFixture, StopDeadlineClosesWhatIsLeft) {
  start();
  const int held = raw_http::connect_to(port_);
  ASSERT_TRUE(raw_http::send_all(held, raw_http::get("/held")));
  ASSERT_TRUE(wait_until([this] { return held_count() == 1; }));
  const auto stop_time = Clock::now();
  server_->stop(std::chrono::milliseconds(500));
  EXPECT_TRUE(raw_http::closed_by_peer(held, kHungMs));
  ASSERT_TRUE(wait_run_returned()) << "a held Reply kept run() past the stop deadline";
  EXPECT_EQ(held_count(), 1u);  // never answered: the deadline ended it
  thread_.join();
  const auto took =
      std::chrono::duration_cast<std::chrono::milliseconds>(run_returned_ - stop_time).count();
  std::printf("stop with a held request: run() returned %lld ms after stop() (deadline 500 ms)\n",
              static_cast<long long>(took));
  EXPECT_GE(took, 450);
  close(held);
}

}  // namespace
