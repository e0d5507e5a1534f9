#include "store/sqlite_store.h"

#include <sqlite3.h>

#include <chrono>

#include "estimate/support_counter.h"

namespace blur::collector {

namespace {

constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS metrics (
  metric_id      INTEGER PRIMARY KEY,
  mechanism      INTEGER NOT NULL,
  epsilon_micros INTEGER NOT NULL,
  domain_size    INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS batches (
  batch_id       INTEGER PRIMARY KEY,
  device_nonce   INTEGER NOT NULL,
  sdk_version    INTEGER NOT NULL,
  received_at_ms INTEGER NOT NULL,
  report_count   INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS reports (
  device_nonce   INTEGER NOT NULL,
  report_id      INTEGER NOT NULL,
  metric_id      INTEGER NOT NULL REFERENCES metrics(metric_id),
  batch_id       INTEGER NOT NULL REFERENCES batches(batch_id),
  epsilon_micros INTEGER NOT NULL,
  value          INTEGER,  -- bit, index, signed number, or a << 32 | b << 16 | bucket
  bits           BLOB,     -- the randomized bit vector (unary encodings)
  PRIMARY KEY (device_nonce, report_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS reports_by_metric ON reports (metric_id, value);
)SQL";

// RAII for prepared statements.
struct Statement {
  Statement(sqlite3* db, const char* sql) {
    ok = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK;
  }
  ~Statement() { sqlite3_finalize(stmt); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* stmt = nullptr;
  bool ok = false;
};

// SQLite integers are signed 64-bit: store the uint64 bit pattern.
sqlite3_int64 as_sql(uint64_t v) { return static_cast<sqlite3_int64>(v); }

}  // namespace

std::unique_ptr<SqliteStore> SqliteStore::open(const std::string& path, std::string* error) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    *error = "cannot open database " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<SqliteStore> store(new SqliteStore(db));
  if (!store->exec("PRAGMA journal_mode=WAL", error) ||
      !store->exec("PRAGMA synchronous=FULL", error) ||
      !store->exec("PRAGMA foreign_keys=ON", error) || !store->exec(kSchema, error)) {
    *error = "cannot initialize database " + path + ": " + *error;
    return nullptr;
  }
  Statement select(db, "SELECT metric_id, mechanism, epsilon_micros, domain_size FROM metrics");
  while (select.ok && sqlite3_step(select.stmt) == SQLITE_ROW) {
    MetricConfig m;
    m.id = static_cast<uint32_t>(sqlite3_column_int64(select.stmt, 0));
    m.mechanism = static_cast<Mechanism>(sqlite3_column_int64(select.stmt, 1));
    m.epsilon_micros = static_cast<uint32_t>(sqlite3_column_int64(select.stmt, 2));
    m.domain_size = static_cast<uint32_t>(sqlite3_column_int64(select.stmt, 3));
    store->metrics_[m.id] = m;
  }
  return store;
}

SqliteStore::SqliteStore(sqlite3* db) : db_(db) {}

SqliteStore::~SqliteStore() { sqlite3_close(db_); }

bool SqliteStore::exec(const char* sql, std::string* error) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    *error = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    return false;
  }
  return true;
}

bool SqliteStore::register_metric(const MetricConfig& metric, std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto existing = metrics_.find(metric.id);
  if (existing != metrics_.end()) {
    if (existing->second == metric) return true;
    *error = "metric " + std::to_string(metric.id) + " is already registered as " +
             describe(existing->second) + "; refusing to change it to " + describe(metric);
    return false;
  }
  Statement insert(db_,
                   "INSERT INTO metrics (metric_id, mechanism, epsilon_micros, domain_size) "
                   "VALUES (?, ?, ?, ?)");
  if (!insert.ok) {
    *error = sqlite3_errmsg(db_);
    return false;
  }
  sqlite3_bind_int64(insert.stmt, 1, metric.id);
  sqlite3_bind_int64(insert.stmt, 2, static_cast<sqlite3_int64>(metric.mechanism));
  sqlite3_bind_int64(insert.stmt, 3, metric.epsilon_micros);
  sqlite3_bind_int64(insert.stmt, 4, metric.domain_size);
  if (sqlite3_step(insert.stmt) != SQLITE_DONE) {
    *error = std::string("cannot register metric: ") + sqlite3_errmsg(db_);
    return false;
  }
  metrics_[metric.id] = metric;
  return true;
}

std::optional<MetricConfig> SqliteStore::metric(uint32_t id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = metrics_.find(id);
  if (it == metrics_.end()) return std::nullopt;
  return it->second;
}

std::vector<MetricConfig> SqliteStore::metrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<MetricConfig> all;
  for (const auto& entry : metrics_) all.push_back(entry.second);
  return all;
}

bool SqliteStore::insert_batch(const Batch& batch, InsertResult* result, std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!exec("BEGIN IMMEDIATE", error)) return false;
  auto fail = [&](const char* what) {
    *error = std::string(what) + ": " + sqlite3_errmsg(db_);
    std::string ignored;
    exec("ROLLBACK", &ignored);
    return false;
  };
  Statement insert_batch(
      db_,
      "INSERT INTO batches (device_nonce, sdk_version, received_at_ms, report_count) "
      "VALUES (?, ?, ?, ?)");
  if (!insert_batch.ok) return fail("cannot prepare batch insert");
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  sqlite3_bind_int64(insert_batch.stmt, 1, as_sql(batch.device_nonce));
  sqlite3_bind_int64(insert_batch.stmt, 2, batch.sdk_version);
  sqlite3_bind_int64(insert_batch.stmt, 3, now.count());
  sqlite3_bind_int64(insert_batch.stmt, 4, static_cast<sqlite3_int64>(batch.reports.size()));
  if (sqlite3_step(insert_batch.stmt) != SQLITE_DONE) return fail("cannot store batch");
  const sqlite3_int64 batch_id = sqlite3_last_insert_rowid(db_);

  Statement insert_report(
      db_,
      "INSERT OR IGNORE INTO reports (device_nonce, report_id, metric_id, batch_id, "
      "epsilon_micros, value, bits) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!insert_report.ok) return fail("cannot prepare report insert");
  InsertResult counts;
  for (const IncomingReport& r : batch.reports) {
    sqlite3_reset(insert_report.stmt);
    sqlite3_bind_int64(insert_report.stmt, 1, as_sql(batch.device_nonce));
    sqlite3_bind_int64(insert_report.stmt, 2, as_sql(r.report_id));
    sqlite3_bind_int64(insert_report.stmt, 3, r.metric_id);
    sqlite3_bind_int64(insert_report.stmt, 4, batch_id);
    sqlite3_bind_int64(insert_report.stmt, 5, r.epsilon_micros);
    if (r.payload == PayloadKind::kBits || r.payload == PayloadKind::kBloom) {
      if (r.payload == PayloadKind::kBloom) {
        sqlite3_bind_int64(insert_report.stmt, 6, r.value);  // the cohort
      } else {
        sqlite3_bind_null(insert_report.stmt, 6);
      }
      sqlite3_bind_blob(insert_report.stmt, 7, r.bits.data(), static_cast<int>(r.bits.size()),
                        SQLITE_STATIC);
    } else {
      sqlite3_int64 value = r.value;
      if (r.payload == PayloadKind::kNumber) value = r.number;
      if (r.payload == PayloadKind::kLocalHash) {
        value = static_cast<sqlite3_int64>(
            SupportCounter::pack_local_hash(r.hash_a, r.hash_b, r.value));
      }
      sqlite3_bind_int64(insert_report.stmt, 6, value);
      sqlite3_bind_null(insert_report.stmt, 7);
    }
    if (sqlite3_step(insert_report.stmt) != SQLITE_DONE) return fail("cannot store report");
    if (sqlite3_changes(db_) == 1) {
      ++counts.inserted;
    } else {
      ++counts.duplicates;
    }
  }
  if (!exec("COMMIT", error)) return fail("commit failed");
  *result = counts;
  return true;
}

void SqliteStore::for_each_payload(uint32_t metric_id,
                                   const std::function<void(int64_t value, const std::string& bits,
                                                            uint64_t count)>& visit) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement select(db_,
                   "SELECT value, bits, COUNT(*) FROM reports WHERE metric_id = ? "
                   "GROUP BY value, bits");
  if (!select.ok) return;
  sqlite3_bind_int64(select.stmt, 1, metric_id);
  std::string bits;
  while (sqlite3_step(select.stmt) == SQLITE_ROW) {
    const void* blob = sqlite3_column_blob(select.stmt, 1);
    bits.assign(static_cast<const char*>(blob),
                blob ? static_cast<size_t>(sqlite3_column_bytes(select.stmt, 1)) : 0);
    visit(sqlite3_column_int64(select.stmt, 0), bits,
          static_cast<uint64_t>(sqlite3_column_int64(select.stmt, 2)));
  }
}

uint64_t SqliteStore::report_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement select(db_, "SELECT COUNT(*) FROM reports");
  if (!select.ok || sqlite3_step(select.stmt) != SQLITE_ROW) return 0;
  return static_cast<uint64_t>(sqlite3_column_int64(select.stmt, 0));
}

}  // namespace blur::collector
