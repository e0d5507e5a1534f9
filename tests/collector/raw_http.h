// Raw-socket HTTP for tests: exact bytes out, answers parsed just enough
// (status line, headers, Content-Length body). Header-only, test use only.
#ifndef BLUR_TESTS_COLLECTOR_RAW_HTTP_H
#define BLUR_TESTS_COLLECTOR_RAW_HTTP_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace raw_http {

// A blocking loopback connection, or -1; from `source` (any 127.x address
// on Linux) if given.
inline int connect_to(int port, const char* source = nullptr) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  if (source != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (inet_pton(AF_INET, source, &local.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      close(fd);
      return -1;
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

inline bool send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Waits up to `timeout_ms` for data (or end of stream) on `fd`.
inline bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1;
}

struct Answer {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
  // The value of header `name` (name given in lower case), or "".
  std::string header(const std::string& name) const {
    std::string lower;
    for (char c : head) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    const size_t at = lower.find("\r\n" + name + ":");
    if (at == std::string::npos) return "";
    size_t begin = at + 3 + name.size();
    while (begin < head.size() && head[begin] == ' ') ++begin;
    return head.substr(begin, head.find("\r\n", begin) - begin);
  }
};

// Parses one complete answer from the front of `data` (removing it), or
// returns nullopt if `data` does not hold a whole one yet.
inline std::optional<Answer> take_answer(std::string* data) {
  const size_t end = data->find("\r\n\r\n");
  if (end == std::string::npos) return std::nullopt;
  Answer answer;
  answer.head = data->substr(0, end + 2);
  if (answer.head.compare(0, 9, "HTTP/1.1 ") != 0 && answer.head.compare(0, 9, "HTTP/1.0 ") != 0)
    return std::nullopt;
  answer.status = std::atoi(answer.head.c_str() + 9);
  const std::string length = answer.header("content-length");
  const size_t size = length.empty() ? 0 : std::stoul(length);
  if (data->size() < end + 4 + size) return std::nullopt;
  answer.body = data->substr(end + 4, size);
  data->erase(0, end + 4 + size);
  return answer;
}

// Reads until one answer is complete; nullopt on end of stream, error or
// `timeout_ms` without one. Bytes after it stay in `*pending`.
inline std::optional<Answer> read_answer(int fd, std::string* pending = nullptr,
                                         int timeout_ms = 10000) {
  std::string local;
  std::string& data = pending ? *pending : local;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (auto answer = take_answer(&data)) return answer;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !readable(fd, static_cast<int>(left.count()))) return std::nullopt;
    char buffer[65536];
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return std::nullopt;
    data.append(buffer, static_cast<size_t>(n));
  }
}

// True if the peer closes (end of stream or reset) within `timeout_ms`,
// discarding whatever it still sends.
inline bool closed_by_peer(int fd, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !readable(fd, static_cast<int>(left.count()))) return false;
    char buffer[4096];
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
}

inline std::string get(const std::string& target, const std::string& extra_headers = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\n" + extra_headers + "\r\n";
}

inline std::string post(const std::string& target, const std::string& body,
                        const std::string& content_type = "application/x-protobuf",
                        const std::string& extra_headers = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: test\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" +
         body;
}

// One request on a new connection; nullopt if no answer came.
inline std::optional<Answer> exchange(int port, const std::string& request) {
  const int fd = connect_to(port);
  if (fd < 0) return std::nullopt;
  std::optional<Answer> answer;
  if (send_all(fd, request)) answer = read_answer(fd);
  close(fd);
  return answer;
}

}  // namespace raw_http

#endif  // BLUR_TESTS_COLLECTOR_RAW_HTTP_H
