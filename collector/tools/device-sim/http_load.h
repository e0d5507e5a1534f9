// The load generator's engine: one thread, epoll, C non-blocking keep-alive
// HTTP/1.1 connections, each with one request in flight. Requests come from
// a pool of pre-encoded POSTs; each gets a fresh 8-byte nonce written at its
// nonce offset before it is sent (never a nonce twice in a run).
#ifndef BLUR_TOOLS_DEVICE_SIM_HTTP_LOAD_H
#define BLUR_TOOLS_DEVICE_SIM_HTTP_LOAD_H

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace blur::sim {

struct LoadRequest {
  std::string bytes;    // the whole HTTP request, headers and body
  size_t nonce_offset;  // of the 8 little-endian device-nonce bytes in `bytes`
  uint32_t reports;
  size_t token_offset = 0;  // of the device token's characters in `bytes`; 0: none
};

struct LoadTarget {
  sockaddr_storage address{};
  socklen_t address_length = 0;
  double duration_seconds = 10;
  int connections = 16;
  std::function<uint64_t(uint64_t sequence)> nonce;  // distinct for distinct sequences
  // The device token for the sequence's nonce, as long as the pool's token
  // field (requests with a token_offset).
  std::function<const std::string&(uint64_t sequence)> token;
  uint64_t max_requests = UINT64_MAX;  // sending also ends after this many
  // Requests per second, all connections together (0: as fast as answers
  // come). A paced run is a probe: an honest device's latency beside a load.
  double rate = 0;
};

struct LoadResult {
  double elapsed_seconds = 0;  // first connect to the last answer
  uint64_t sent = 0;           // requests written
  uint64_t answered = 0;       // complete responses
  uint64_t reports_sent = 0;
  uint64_t accepted = 0;    // sum of "accepted" over 200 answers
  uint64_t over_limit = 0;  // sum of "over_limit": refused over the contribution bound
  uint64_t duplicates = 0;  // sum of "duplicates"
  uint64_t quarantined = 0;  // sum of "quarantined"
  std::array<uint64_t, 600> statuses{};
  std::array<std::string, 600> first_body;  // the first body of each non-200 status
  uint64_t lost = 0;                        // requests whose connection failed before an answer
  uint64_t connect_failures = 0;
  std::string first_error;           // of a lost request or a failed connect
  std::vector<uint32_t> latency_us;  // one per answer
};

// Sends for target.duration_seconds, then waits (at most 10 s) for the
// answers in flight. Prints a progress line per second to stderr.
// An error (no epoll, ...) is returned in *error.
bool run_http_load(const std::vector<LoadRequest>& pool, const LoadTarget& target,
                   LoadResult* result, std::string* error);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_HTTP_LOAD_H
