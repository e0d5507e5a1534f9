#include "http_load.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "http_response.h"

namespace blur::sim {

namespace {

using Clock = std::chrono::steady_clock;

class Engine {
 public:
  Engine(const std::vector<LoadRequest>& pool, const LoadTarget& target, LoadResult* result)
      : pool_(pool), target_(target), result_(result), connections_(target.connections) {}
  ~Engine() {
    for (Connection& c : connections_) {
      if (c.fd >= 0) close(c.fd);
    }
    if (epoll_ >= 0) close(epoll_);
  }

  bool run(std::string* error);

 private:
  struct Connection {
    int fd = -1;
    bool connected = false;
    bool in_flight = false;
    bool want_write = false;  // EPOLLOUT registered for a partial write
    std::string out;
    size_t written = 0;
    std::string in;
    Clock::time_point sent_at;
    Clock::time_point reconnect_at;  // when fd < 0
  };

  bool sending() const { return now_ < stop_at_ && sequence_ < target_.max_requests; }
  void open(Connection& c, uint32_t index);
  void drop(Connection& c, const std::string& why, bool connect_failed);
  void send_next(Connection& c);
  void send_paced();
  void flush(Connection& c);
  void receive(Connection& c, uint32_t index);
  void watch(Connection& c, uint32_t index, uint32_t events);
  void progress();

  const std::vector<LoadRequest>& pool_;
  const LoadTarget& target_;
  LoadResult* result_;
  std::vector<Connection> connections_;
  int epoll_ = -1;
  uint64_t sequence_ = 0;
  uint32_t in_flight_ = 0;
  Clock::time_point start_, stop_at_, now_, next_tick_;
  uint64_t last_answered_ = 0, last_accepted_ = 0, last_over_limit_ = 0, last_non_200_ = 0,
           non_200_ = 0;
  // Pacing (target_.rate > 0): connections waiting for their turn to send.
  Clock::duration interval_{};
  Clock::time_point next_send_at_;
  std::vector<uint32_t> waiting_;
};

void Engine::watch(Connection& c, uint32_t index, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u32 = index;
  epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd, &event);
}

void Engine::open(Connection& c, uint32_t index) {
  c = Connection{};
  c.fd = socket(target_.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c.fd < 0) return drop(c, std::string("socket: ") + std::strerror(errno), true);
  const int one = 1;
  setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(c.fd, reinterpret_cast<const sockaddr*>(&target_.address), target_.address_length) !=
          0 &&
      errno != EINPROGRESS) {
    return drop(c, std::string("connect: ") + std::strerror(errno), true);
  }
  epoll_event event{};
  event.events = EPOLLIN | EPOLLOUT;  // writable: connected (or failed: SO_ERROR)
  event.data.u32 = index;
  if (epoll_ctl(epoll_, EPOLL_CTL_ADD, c.fd, &event) != 0) {
    return drop(c, std::string("epoll_ctl: ") + std::strerror(errno), true);
  }
}

// Closes the connection; a request in flight on it is lost (its nonce is
// not reused). Reopened at once, or after 100 ms when connecting failed.
void Engine::drop(Connection& c, const std::string& why, bool connect_failed) {
  if (c.in_flight) {
    ++result_->lost;
    --in_flight_;
  }
  if (connect_failed) ++result_->connect_failures;
  if ((c.in_flight || connect_failed) && result_->first_error.empty()) result_->first_error = why;
  if (c.fd >= 0) close(c.fd);
  c = Connection{};
  c.reconnect_at = now_ + (connect_failed ? std::chrono::milliseconds(100) : Clock::duration{0});
}

void Engine::send_next(Connection& c) {
  // Done: close at once. An idle keep-alive connection can hold one of the
  // server's threads (cpp-httplib) while other connections' answers wait.
  if (!sending()) return drop(c, "", false);
  if (target_.rate > 0) {
    if (now_ < next_send_at_) {
      waiting_.push_back(static_cast<uint32_t>(&c - connections_.data()));
      return;
    }
    // No catching up after a stall: the next request one interval from now at the latest.
    next_send_at_ = std::max(next_send_at_, now_ - interval_) + interval_;
  }
  const LoadRequest& request = pool_[sequence_ % pool_.size()];
  c.out.assign(request.bytes);
  if (request.token_offset != 0) {
    const std::string& token = target_.token(sequence_);
    c.out.replace(request.token_offset, token.size(), token);
  }
  const uint64_t nonce = target_.nonce(sequence_++);
  for (int i = 0; i < 8; ++i) c.out[request.nonce_offset + i] = static_cast<char>(nonce >> (8 * i));
  c.written = 0;
  c.in_flight = true;
  c.sent_at = now_;
  ++in_flight_;
  ++result_->sent;
  result_->reports_sent += request.reports;
  flush(c);
}

void Engine::send_paced() {
  while (!waiting_.empty() && now_ >= next_send_at_) {
    Connection& c = connections_[waiting_.back()];
    waiting_.pop_back();
    if (c.fd >= 0 && c.connected && !c.in_flight) send_next(c);
  }
}

void Engine::flush(Connection& c) {
  const uint32_t index = static_cast<uint32_t>(&c - connections_.data());
  while (c.written < c.out.size()) {
    const ssize_t n = send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
    if (n > 0) {
      c.written += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!c.want_write) watch(c, index, EPOLLIN | EPOLLOUT);
      c.want_write = true;
      return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return drop(c, std::string("send: ") + std::strerror(errno), false);
    }
  }
  if (c.want_write) watch(c, index, EPOLLIN);
  c.want_write = false;
}

void Engine::receive(Connection& c, uint32_t index) {
  char buffer[65536];
  // One read per readiness event: epoll (level-triggered) reports what is left.
  const ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
  if (n == 0) return drop(c, "the collector closed the connection", false);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    return drop(c, std::string("recv: ") + std::strerror(errno), false);
  }
  c.in.append(buffer, static_cast<size_t>(n));
  for (;;) {
    const Response r = parse_response(c.in);
    if (r.state == Response::State::kIncomplete) return;
    if (r.state == Response::State::kMalformed || !c.in_flight) {
      return drop(c, r.state == Response::State::kMalformed ? r.problem : "unsolicited response",
                  false);
    }
    c.in_flight = false;
    --in_flight_;
    ++result_->answered;
    result_->latency_us.push_back(static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(now_ - c.sent_at).count()));
    const int status = r.status < 600 ? r.status : 599;
    ++result_->statuses[status];
    const char* body = c.in.data() + r.body_offset;
    const size_t body_length = r.length - r.body_offset;
    if (status == 200) {
      result_->accepted += count_of(body, body_length, "accepted");
      result_->over_limit += count_of(body, body_length, "over_limit");
      result_->duplicates += count_of(body, body_length, "duplicates");
      result_->quarantined += count_of(body, body_length, "quarantined");
    } else {
      ++non_200_;
      if (result_->first_body[status].empty()) {
        result_->first_body[status].assign(body, std::min<size_t>(body_length, 400));
      }
    }
    c.in.erase(0, r.length);
    if (r.close) {
      drop(c, "", false);
      if (sending()) open(c, index);
      return;
    }
    send_next(c);
  }
}

void Engine::progress() {
  const double seconds = std::chrono::duration<double>(now_ - start_).count();
  std::fprintf(stderr,
               "  %5.1f s  %8llu req/s  %10llu reports/s accepted  %8llu/s over the bound  "
               "non-200 %llu\n",
               seconds, static_cast<unsigned long long>(result_->answered - last_answered_),
               static_cast<unsigned long long>(result_->accepted - last_accepted_),
               static_cast<unsigned long long>(result_->over_limit - last_over_limit_),
               static_cast<unsigned long long>(non_200_ - last_non_200_));
  last_answered_ = result_->answered;
  last_accepted_ = result_->accepted;
  last_over_limit_ = result_->over_limit;
  last_non_200_ = non_200_;
}

bool Engine::run(std::string* error) {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) {
    *error = std::string("epoll_create1: ") + std::strerror(errno);
    return false;
  }
  result_->latency_us.reserve(static_cast<size_t>(target_.duration_seconds * 40000));
  now_ = start_ = Clock::now();
  stop_at_ = start_ + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(target_.duration_seconds));
  next_tick_ = start_ + std::chrono::seconds(1);
  next_send_at_ = start_;
  if (target_.rate > 0) {
    interval_ = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(1.0 / target_.rate));
  }
  const Clock::time_point give_up = stop_at_ + std::chrono::seconds(10);
  for (uint32_t i = 0; i < connections_.size(); ++i) open(connections_[i], i);
  epoll_event events[256];
  Clock::time_point last_answer = start_;
  for (;;) {
    now_ = Clock::now();
    if (!sending() && in_flight_ == 0) break;
    if (now_ >= give_up) break;  // answers still missing are counted below
    if (sending()) {
      for (uint32_t i = 0; i < connections_.size(); ++i) {
        if (connections_[i].fd < 0 && connections_[i].reconnect_at <= now_)
          open(connections_[i], i);
      }
    }
    send_paced();
    auto wake = std::min({next_tick_, sending() ? stop_at_ : give_up,
                          now_ + std::chrono::milliseconds(20)});
    if (!waiting_.empty()) wake = std::min(wake, next_send_at_);
    const auto wait = wake - now_;
    const int timeout = static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::microseconds>(wait).count() + 999) / 1000);
    const int n = epoll_wait(epoll_, events, 256, timeout);
    if (n < 0 && errno != EINTR) {
      *error = std::string("epoll_wait: ") + std::strerror(errno);
      return false;
    }
    now_ = Clock::now();
    const uint64_t answered_before = result_->answered;
    for (int e = 0; e < n; ++e) {
      const uint32_t index = events[e].data.u32;
      Connection& c = connections_[index];
      if (c.fd < 0) continue;
      if (!c.connected) {
        int so_error = 0;
        socklen_t length = sizeof so_error;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &so_error, &length);
        if (so_error != 0) {
          drop(c, std::string("connect: ") + std::strerror(so_error), true);
          continue;
        }
        if (!(events[e].events & EPOLLOUT)) continue;
        c.connected = true;
        watch(c, index, EPOLLIN);
        send_next(c);
        continue;
      }
      if (events[e].events & EPOLLOUT) flush(c);
      if (c.fd >= 0 && (events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) receive(c, index);
    }
    if (result_->answered != answered_before) last_answer = now_;
    if (now_ >= next_tick_) {
      progress();
      next_tick_ += std::chrono::seconds(1);
    }
  }
  result_->lost += in_flight_;  // never answered within 10 s of the end
  if (in_flight_ > 0 && result_->first_error.empty()) {
    result_->first_error = "no answer within 10 s after the end";
  }
  result_->elapsed_seconds =
      std::chrono::duration<double>(std::max(last_answer, std::min(now_, stop_at_)) - start_)
          .count();
  return true;
}

}  // namespace

bool run_http_load(const std::vector<LoadRequest>& pool, const LoadTarget& target,
                   LoadResult* result, std::string* error) {
  if (pool.empty() || target.connections < 1) {
    *error = "nothing to send";
    return false;
  }
  Engine engine(pool, target, result);
  return engine.run(error);
}

}  // namespace blur::sim
