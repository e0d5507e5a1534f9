// Report storage in SQLite (WAL journal, synchronous=FULL): a batch is one
// transaction, and insert_batch returns only after the commit is durable,
// so the HTTP layer acknowledges nothing that could still be lost.
// Reports are keyed by (device_nonce, report_id): a retried batch is
// idempotent. One connection behind a mutex; safe to call from any thread.
#ifndef BLUR_COLLECTOR_STORE_SQLITE_STORE_H
#define BLUR_COLLECTOR_STORE_SQLITE_STORE_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ingest/batch.h"
#include "metrics/metric_config.h"

struct sqlite3;

namespace blur::collector {

class SqliteStore {
 public:
  // Opens or creates the database. nullptr and *error on failure.
  static std::unique_ptr<SqliteStore> open(const std::string& path, std::string* error);
  ~SqliteStore();
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Registers a metric, or confirms an identical registration. A different
  // configuration for an existing id is refused: stored reports would no
  // longer match their metric.
  bool register_metric(const MetricConfig& metric, std::string* error);
  std::optional<MetricConfig> metric(uint32_t id) const;
  std::vector<MetricConfig> metrics() const;

  struct InsertResult {
    size_t inserted = 0;
    size_t duplicates = 0;  // already stored (a retried batch)
  };
  // Stores a validated batch in one durable transaction.
  bool insert_batch(const Batch& batch, InsertResult* result, std::string* error);

  // Calls visit(value, bits, count) for each distinct payload among the
  // metric's reports (a GROUP BY: the store aggregates, the estimator's
  // SupportCounter decides what a payload supports). `bits` is empty for
  // scalar payloads, `value` is 0 for unary bit vectors and the cohort for
  // Bloom filters; numbers are signed.
  void for_each_payload(uint32_t metric_id,
                        const std::function<void(int64_t value, const std::string& bits,
                                                 uint64_t count)>& visit) const;
  uint64_t report_count() const;

 private:
  explicit SqliteStore(sqlite3* db);
  bool exec(const char* sql, std::string* error) const;

  mutable std::mutex mutex_;
  sqlite3* db_;
  std::map<uint32_t, MetricConfig> metrics_;  // cache of the metrics table
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_STORE_SQLITE_STORE_H
