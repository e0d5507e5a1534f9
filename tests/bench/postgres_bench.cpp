// PostgreSQL insert_reports throughput: durable transactions of 64 and 1,024
// reports, from one connection and from two in parallel (what two collector
// processes do), each on a fresh schema.
//
//   postgres_bench [--url postgresql://...] [--seconds S] [--preload N]
//
// Without --url it starts its own server with tests/support/postgres_server.sh
// (fsync and synchronous_commit on) in the build tree and stops it after.
// --preload N inserts N reports before measuring (a larger primary key index).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "postgres_test_db.h"
#include "store/postgres/postgres_backend.h"

namespace {

using namespace blur::collector;
using namespace blur::collector::store;
using Clock = std::chrono::steady_clock;

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A batch of a device fleet's reports; nonces change per batch.
std::vector<ReportRow> make_batch(size_t size) {
  std::vector<ReportRow> rows(size);
  for (size_t i = 0; i < size; ++i) {
    ReportRow& row = rows[i];
    row.report_id = i % 8;
    row.metric_id = 1 + static_cast<uint32_t>(i % 4);
    row.epsilon_micros = 1000000;
    row.device_minute = 29000000;
    row.bucket_start = 1767225600;
    row.received_at = 1767225642;
    row.time_source = TimeSource::kReceived;
    row.sdk_version = 0x000100;
    row.payload = std::string(16, static_cast<char>(i));  // e.g. a 128-bit unary vector
  }
  return rows;
}

struct Worker {
  uint64_t reports = 0;
  uint64_t transactions = 0;
  std::vector<double> commit_ms;
  std::string error;
};

void work(Database& database, size_t batch, Clock::time_point until, uint64_t seed,
          Worker& out) {
  auto connection = database.connect();
  if (!connection) {
    out.error = connection.error().message;
    return;
  }
  Connection& c = *connection.value();
  std::vector<ReportRow> rows = make_batch(batch);
  uint64_t state = seed;
  while (Clock::now() < until) {
    for (ReportRow& row : rows) row.device_nonce = splitmix(state);
    const auto start = Clock::now();
    auto began = c.begin();
    auto inserted = began ? c.insert_reports(rows) : Outcome<std::vector<bool>>(began.error());
    auto committed = inserted ? c.commit() : Fallible(inserted.error());
    if (!committed) {
      c.rollback();
      out.error = committed.error().message;
      return;
    }
    out.commit_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    for (bool stored : inserted.value()) out.reports += stored ? 1 : 0;
    ++out.transactions;
  }
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(p * static_cast<double>(values.size() - 1))];
}

bool run(size_t batch, int connections, double seconds, uint64_t preload) {
  blur_test::PostgresTestSchema schema;  // a fresh schema on the server
  if (!schema.ok()) {
    std::fprintf(stderr, "%s\n", schema.error().c_str());
    return false;
  }
  auto database = open_postgres_database(schema.url());
  if (!database) {
    std::fprintf(stderr, "%s\n", database.error().message.c_str());
    return false;
  }
  {
    auto setup = database.value()->connect();
    auto created = setup ? setup.value()->ensure_schema() : Fallible(setup.error());
    if (!created) {
      std::fprintf(stderr, "%s\n", created.error().message.c_str());
      return false;
    }
    std::vector<ReportRow> rows = make_batch(10000);
    uint64_t state = 0xfeed;
    for (uint64_t done_rows = 0; done_rows < preload; done_rows += rows.size()) {
      for (ReportRow& row : rows) row.device_nonce = splitmix(state);
      if (auto inserted = setup.value()->insert_reports(rows); !inserted) {
        std::fprintf(stderr, "preload: %s\n", inserted.error().message.c_str());
        return false;
      }
    }
    (void)schema.exec("CHECKPOINT");  // keep the preload's writes out of the measurement
  }
  std::vector<Worker> workers(static_cast<size_t>(connections));
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(seconds));
  for (int i = 0; i < connections; ++i) {
    threads.emplace_back(work, std::ref(*database.value()), batch, until,
                         0x1234567ull * static_cast<uint64_t>(i + 1), std::ref(workers[i]));
  }
  for (std::thread& thread : threads) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  uint64_t reports = 0, transactions = 0;
  std::vector<double> latencies;
  for (const Worker& worker : workers) {
    if (!worker.error.empty()) {
      std::fprintf(stderr, "error: %s\n", worker.error.c_str());
      return false;
    }
    reports += worker.reports;
    transactions += worker.transactions;
    latencies.insert(latencies.end(), worker.commit_ms.begin(), worker.commit_ms.end());
  }
  std::printf("%6zu  %11d  %12.0f  %14.0f  %9.2f  %9.2f\n", batch, connections,
              static_cast<double>(transactions) / elapsed, static_cast<double>(reports) / elapsed,
              percentile(latencies, 0.5), percentile(latencies, 0.99));
  std::fflush(stdout);
  return true;
}

std::string read_url(const std::string& file) {
  std::FILE* in = std::fopen(file.c_str(), "r");
  if (in == nullptr) return "";
  char line[4096] = {};
  const bool got = std::fgets(line, sizeof line, in) != nullptr;
  std::fclose(in);
  std::string url = got ? line : "";
  while (!url.empty() && url.back() == '\n') url.pop_back();
  return url;
}

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  double seconds = 5;
  uint64_t preload = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--url") == 0) url = argv[i + 1];
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--preload") == 0) preload = std::strtoull(argv[i + 1], nullptr, 10);
  }
  const std::string dir = BLUR_BENCH_POSTGRES_DIR;
  const std::string script = BLUR_POSTGRES_SERVER_SCRIPT;
  const bool own_server = url.empty();
  if (own_server) {
    if (std::system((script + " start " + dir + " >/dev/null").c_str()) != 0) {
      std::fprintf(stderr, "could not start PostgreSQL (%s start %s)\n", script.c_str(),
                   dir.c_str());
      return 1;
    }
    url = read_url(dir + "/url");
  }
  // PostgresTestSchema reads the server's URL from this file.
  const std::string url_file = dir + ".url";
  if (std::FILE* out = std::fopen(url_file.c_str(), "w")) {
    std::fprintf(out, "%s\n", url.c_str());
    std::fclose(out);
  }
  setenv("BLUR_TEST_POSTGRES_URL_FILE", url_file.c_str(), 1);

  std::printf("PostgreSQL insert_reports, one durable transaction per batch, %.0f s each%s\n",
              seconds, preload ? (", " + std::to_string(preload) + " reports preloaded").c_str()
                               : "");
  std::printf("%6s  %11s  %12s  %14s  %9s  %9s\n", "batch", "connections", "commits/s",
              "reports/s", "p50 ms", "p99 ms");
  bool ok = true;
  for (size_t batch : {size_t{64}, size_t{1024}}) {
    for (int connections : {1, 2}) ok = run(batch, connections, seconds, preload) && ok;
  }
  if (own_server) (void)std::system((script + " stop " + dir).c_str());
  std::remove(url_file.c_str());
  return ok ? 0 : 1;
}
