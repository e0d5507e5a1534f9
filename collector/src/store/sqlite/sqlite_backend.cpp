#include "store/sqlite/sqlite_backend.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

#include "store/sqlite/wal_checkpointer.h"

namespace blur::collector::store {

namespace {

// Retired metrics (schema 4): no new reports, estimates still read.
#define BLUR_SQLITE_RETIRED_METRICS                  \
  "CREATE TABLE IF NOT EXISTS retired_metrics (\n"   \
  "  metric_id  INTEGER PRIMARY KEY,\n"              \
  "  retired_at INTEGER NOT NULL  -- Unix seconds\n" \
  ");\n"

// The contribution bound's two count tables, one shape (schema 2: report_counts
// per time bucket; schema 3: receive_counts per UTC day of arrival), and the
// raw reports' index by bucket. Since schema 5 all are keyed period first
// and device before metric: a device batch (a few reports each of many
// metrics, all in one bucket and day) then writes one run of adjacent rows
// per table instead of one row per metric at a random place, and a commit
// touches about a tenth of the pages (docs/collector.md, "Device batches:
// where the time goes"). Reads of one metric's rows over a range filter the
// range's rows of every metric instead.
#define BLUR_SQLITE_COUNT_TABLE(TABLE, PERIOD)                \
  "CREATE TABLE IF NOT EXISTS " TABLE " (\n"                   \
  "  " PERIOD " INTEGER NOT NULL,  -- Unix seconds\n"         \
  "  device_nonce INTEGER NOT NULL,\n"                        \
  "  metric_id INTEGER NOT NULL,\n"                           \
  "  reports INTEGER NOT NULL,  -- the device's stored reports of the period\n" \
  "  PRIMARY KEY (" PERIOD ", device_nonce, metric_id)\n"     \
  ") WITHOUT ROWID;\n"
// Raw reports (schema 5: rows in arrival order, found by key and by bucket
// through indexes). Before 5 the table was keyed (device_nonce, report_id)
// WITHOUT ROWID, so each batch's whole rows went to a random place in the
// table; now only its small index entries do, and a commit's rows fill
// pages one after the other (about a third fewer log pages per device batch).
// The indexes are created with the table (fresh, or by the upgrade to 5),
// never beside the old table.
#define BLUR_SQLITE_REPORTS_TABLE                                    \
  "CREATE TABLE IF NOT EXISTS reports (\n"                           \
  "  device_nonce   INTEGER NOT NULL,  -- uint64 bit patterns\n"     \
  "  report_id      INTEGER NOT NULL,\n"                             \
  "  metric_id      INTEGER NOT NULL,\n"                             \
  "  epsilon_micros INTEGER NOT NULL,\n"                             \
  "  device_minute  INTEGER NOT NULL,  -- as the device sent it; 0: none\n" \
  "  bucket_start   INTEGER NOT NULL,  -- Unix seconds\n"            \
  "  received_at    INTEGER NOT NULL,\n"                             \
  "  time_source    INTEGER NOT NULL,  -- 0: receive time, 1: the device's time\n" \
  "  sdk_version    INTEGER NOT NULL,\n"                             \
  "  payload        BLOB NOT NULL      -- flatten_payload()\n"       \
  ");\n"
#define BLUR_SQLITE_REPORTS_INDEXES                                                    \
  "CREATE UNIQUE INDEX IF NOT EXISTS reports_by_key ON reports (device_nonce, report_id);\n" \
  "CREATE INDEX IF NOT EXISTS reports_by_bucket ON reports (bucket_start);\n"

constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS blur_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (
  metric_id INTEGER PRIMARY KEY,
  config    TEXT NOT NULL          -- config_to_text(): the whole configuration
);
CREATE TABLE IF NOT EXISTS nodes (
  node_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at  INTEGER NOT NULL,
  description TEXT NOT NULL
);
)SQL" BLUR_SQLITE_REPORTS_TABLE R"SQL(
CREATE TABLE IF NOT EXISTS aggregates (
  metric_id    INTEGER NOT NULL,
  bucket_start INTEGER NOT NULL,
  node_id      INTEGER NOT NULL,
  reports      INTEGER NOT NULL,
  stats        BLOB NOT NULL,       -- Aggregate::serialize()
  PRIMARY KEY (metric_id, bucket_start, node_id)
) WITHOUT ROWID;
)SQL" BLUR_SQLITE_COUNT_TABLE("report_counts", "bucket_start") R"SQL(
CREATE TABLE IF NOT EXISTS devices (  -- enrollment's bindings (schema 3)
  device_nonce    INTEGER PRIMARY KEY,  -- uint64 bit patterns
  enrolled_at     INTEGER NOT NULL,     -- Unix s of the first enrollment
  key_sha256      BLOB NOT NULL,        -- SHA-256 of the device key, 32 bytes
  last_renewed_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS devices_by_enrollment ON devices (enrolled_at);
)SQL" BLUR_SQLITE_COUNT_TABLE("receive_counts", "day_start") BLUR_SQLITE_RETIRED_METRICS;

// Schema 4: day roll-up rows (store/backend.h: AggregateTable::kDay), one
// per (metric, UTC day, node), the sum of that node's bucket rows of the day.
constexpr const char* kDayAggregatesTable = R"SQL(
CREATE TABLE IF NOT EXISTS day_aggregates (  -- day roll-ups (schema 4)
  metric_id    INTEGER NOT NULL,
  day_start    INTEGER NOT NULL,    -- UTC midnight, Unix seconds
  node_id      INTEGER NOT NULL,
  reports      INTEGER NOT NULL,
  stats        BLOB NOT NULL,       -- Aggregate::serialize() of the node's bucket rows
  PRIMARY KEY (metric_id, day_start, node_id)
) WITHOUT ROWID;
)SQL";

// Version 1 -> 2: count what is stored (report_counts exists by now).
constexpr const char* kFillReportCounts = R"SQL(
INSERT INTO report_counts (metric_id, bucket_start, device_nonce, reports)
  SELECT metric_id, bucket_start, device_nonce, COUNT(*) FROM reports
  GROUP BY metric_id, bucket_start, device_nonce;
UPDATE blur_schema SET version = 2;
)SQL";

// Version 2 -> 3: devices exists by now, empty (each device binds its key
// at its next enrollment).
constexpr const char* kAddDevices = "UPDATE blur_schema SET version = 3";
// Version 3 -> 4: retired_metrics, empty (SQLite keeps its one reports
// table: partitions are PostgreSQL's).
constexpr const char* kUpgrade3To4RetiredMetrics =
    BLUR_SQLITE_RETIRED_METRICS "UPDATE blur_schema SET version = 4;";
// Version 2 -> 3: count what is stored per day of arrival (receive_counts
// exists by now).
constexpr const char* kFillReceiveCounts = R"SQL(
INSERT INTO receive_counts (metric_id, day_start, device_nonce, reports)
  SELECT metric_id, received_at - ((received_at % 86400) + 86400) % 86400 AS day,
         device_nonce, COUNT(*) FROM reports
  GROUP BY metric_id, day, device_nonce;
UPDATE blur_schema SET version = 3;
)SQL";

// Version 4 -> 5: the count tables keyed period first
// (BLUR_SQLITE_COUNT_TABLE) and the reports in a rowid table
// (BLUR_SQLITE_REPORTS_TABLE): each rebuilt, its rows copied, in the
// upgrade's transaction (a large database takes as long as copying it).
#define BLUR_SQLITE_REKEY_COUNT_TABLE(TABLE, PERIOD)                                    \
  "ALTER TABLE " TABLE " RENAME TO " TABLE "_version_4;\n" BLUR_SQLITE_COUNT_TABLE(     \
      TABLE, PERIOD) "INSERT INTO " TABLE " (" PERIOD ", device_nonce, metric_id, reports)" \
                     " SELECT " PERIOD ", device_nonce, metric_id, reports FROM " TABLE  \
                     "_version_4;\nDROP TABLE " TABLE "_version_4;\n"
constexpr const char* kUpgrade4To5PeriodFirstKeys =
    BLUR_SQLITE_REKEY_COUNT_TABLE("report_counts", "bucket_start")
        BLUR_SQLITE_REKEY_COUNT_TABLE("receive_counts", "day_start")
    "ALTER TABLE reports RENAME TO reports_version_4;\n"
    "DROP INDEX reports_by_bucket;\n" BLUR_SQLITE_REPORTS_TABLE
    "INSERT INTO reports SELECT device_nonce, report_id, metric_id, epsilon_micros,"
    " device_minute, bucket_start, received_at, time_source, sdk_version, payload"
    " FROM reports_version_4;\n"
    "DROP TABLE reports_version_4;\n" BLUR_SQLITE_REPORTS_INDEXES
    "UPDATE blur_schema SET version = 5;";

// A per-metric table's name and its period column (the bucket's or the
// day's start): the two count tables, the two aggregate tables.
struct PeriodTableSql {
  const char* table;
  const char* period;
};
PeriodTableSql count_table_sql(CountTable table) {
  return table == CountTable::kBucket ? PeriodTableSql{"report_counts", "bucket_start"}
                                      : PeriodTableSql{"receive_counts", "day_start"};
}
PeriodTableSql aggregate_table_sql(AggregateTable table) {
  return table == AggregateTable::kBucket ? PeriodTableSql{"aggregates", "bucket_start"}
                                          : PeriodTableSql{"day_aggregates", "day_start"};
}

uint64_t from_sql(sqlite3_int64 v) { return static_cast<uint64_t>(v); }

// A lazy commit (synchronous=NORMAL in WAL mode) has written its frames to
// the write-ahead log when COMMIT returns; an fdatasync of the log then
// makes it durable, with every commit before it. The log's frames carry
// cumulative checksums, so a crash before the sync loses a suffix of the
// commits, never one in the middle; checkpoints sync the log before they
// copy it. Our own descriptor of the log file, reopened if the file was
// replaced (a new inode).
class WalSync final : public CommitSync {
 public:
  explicit WalSync(std::string database_path) : path_(std::move(database_path) + "-wal") {}
  ~WalSync() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Fallible sync() override {
    std::lock_guard<std::mutex> lock(mutex_);
    struct stat file {};
    if (::stat(path_.c_str(), &file) != 0) return failed("find");
    struct stat open_file {};
    if (fd_ >= 0 && (::fstat(fd_, &open_file) != 0 || open_file.st_ino != file.st_ino ||
                     open_file.st_dev != file.st_dev)) {
      ::close(fd_);
      fd_ = -1;
    }
    if (fd_ < 0) fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return failed("open");
    if (::fdatasync(fd_) != 0) return failed("sync");
    return done();
  }

 private:
  Error failed(const char* what) const {
    return unavailable("cannot " + std::string(what) + " the write-ahead log " + path_ + ": " +
                       std::strerror(errno));
  }
  const std::string path_;
  std::mutex mutex_;
  int fd_ = -1;
};

// Parameters beside integers (which bind as 64-bit, an unsigned one as its
// bit pattern): text, copied, and blobs, which must outlive the step.
struct Text {
  const std::string& value;
};
struct Blob {
  const void* data;
  size_t size;
};

// A prepared statement in use: binds its parameters in order (?1, ?2, ...),
// steps, and is reset when it goes, also on an early return, so it never
// keeps a read transaction open. Not prepared (null): prepared() is false.
class Statement {
 public:
  explicit Statement(sqlite3_stmt* statement) : s_(statement) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() {
    if (s_) sqlite3_reset(s_);
  }
  bool prepared() const { return s_ != nullptr; }
  // Resets the statement and binds `values` (for one more run of it).
  template <typename... Values>
  void bind(const Values&... values) {
    sqlite3_reset(s_);
    int index = 0;
    (bind_one(++index, values), ...);
    (void)index;  // no parameters
  }
  int step() { return sqlite3_step(s_); }
  sqlite3_stmt* row() const { return s_; }

 private:
  template <typename Value>
  void bind_one(int index, const Value& value) {
    if constexpr (std::is_same_v<Value, Text>) {
      sqlite3_bind_text(s_, index, value.value.data(), static_cast<int>(value.value.size()),
                        SQLITE_TRANSIENT);
    } else if constexpr (std::is_same_v<Value, Blob>) {
      sqlite3_bind_blob(s_, index, value.data, static_cast<int>(value.size), SQLITE_STATIC);
    } else {
      static_assert(std::is_integral_v<Value>, "bind integers, Text or Blob");
      sqlite3_bind_int64(s_, index, static_cast<sqlite3_int64>(value));
    }
  }
  sqlite3_stmt* s_;
};

class SqliteConnection final : public Connection {
 public:
  // `checkpointer` outlives the connection (its commit hook points there).
  SqliteConnection(sqlite3* db, std::string path, std::shared_ptr<WalCheckpointer> checkpointer)
      : db_(db), path_(std::move(path)), checkpointer_(std::move(checkpointer)) {}
  ~SqliteConnection() override {
    for (auto& [sql, statement] : statements_) sqlite3_finalize(statement);
    sqlite3_close(db_);
  }

  Fallible ensure_schema() override {
    // One writer creates the tables; IMMEDIATE takes the write lock first.
    if (auto status = exec("BEGIN IMMEDIATE"); !status) return status;
    auto status = create_or_check();
    if (!status) {
      rollback();
      return status;
    }
    return commit();
  }

  Fallible begin() override {
    // Never an ordinary transaction at NORMAL (a lazy one could not restore FULL).
    if (lazy_) {
      end_lazy();
      if (lazy_) return unavailable("database " + path_ + ": cannot restore synchronous=FULL");
    }
    return exec("BEGIN IMMEDIATE");
  }
  // NORMAL for this transaction only: in WAL mode its commit is not synced,
  // the next FULL commit's sync of the log covers it.
  Fallible begin_lazy() override {
    if (auto status = exec("PRAGMA synchronous=NORMAL"); !status) return status;
    lazy_ = true;
    auto status = exec("BEGIN IMMEDIATE");
    if (!status) end_lazy();
    return status;
  }
  Fallible commit() override {
    auto status = exec("COMMIT");
    end_lazy();
    return status;
  }
  void rollback() override {
    (void)exec("ROLLBACK");
    end_lazy();
  }
  std::shared_ptr<CommitSync> commit_sync() override {
    if (!wal_sync_) wal_sync_ = std::make_shared<WalSync>(path_);
    return wal_sync_;
  }

  Outcome<std::vector<std::pair<uint32_t, std::string>>> load_metrics() override {
    return collect("load metrics", "SELECT metric_id, config FROM metrics ORDER BY metric_id",
                   [](sqlite3_stmt* s) {
                     return std::pair<uint32_t, std::string>(
                         static_cast<uint32_t>(sqlite3_column_int64(s, 0)), text(s, 1));
                   });
  }

  Outcome<bool> insert_metric(uint32_t id, const std::string& config) override {
    if (auto status = execute("register metric",
                              "INSERT INTO metrics (metric_id, config) VALUES (?, ?) "
                              "ON CONFLICT DO NOTHING",
                              id, Text{config});
        !status) {
      return status.error();
    }
    return sqlite3_changes(db_) == 1;
  }

  Outcome<int64_t> register_node(const std::string& description) override {
    if (auto status =
            execute("register node",
                    "INSERT INTO nodes (started_at, description) VALUES (strftime('%s', 'now'), ?)",
                    Text{description});
        !status) {
      return status.error();
    }
    return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
  }

  // One table whose primary key is the report's key: a duplicate is found
  // wherever it is (no window).
  Outcome<std::vector<bool>> insert_reports(const std::vector<ReportRow>& rows,
                                            int64_t /*duplicate_since*/) override {
    Statement s = statement(
        "INSERT INTO reports (device_nonce, report_id, metric_id, epsilon_micros, device_minute, "
        "bucket_start, received_at, time_source, sdk_version, payload) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING");
    if (!s.prepared()) return failure("insert reports");
    std::vector<bool> inserted(rows.size(), false);
    for (size_t i = 0; i < rows.size(); ++i) {
      const ReportRow& r = rows[i];
      s.bind(r.device_nonce, r.report_id, r.metric_id, r.epsilon_micros, r.device_minute,
             r.bucket_start, r.received_at, static_cast<int>(r.time_source), r.sdk_version,
             Blob{r.payload.data(), r.payload.size()});
      if (s.step() != SQLITE_DONE) return failure("insert reports");
      inserted[i] = sqlite3_changes(db_) == 1;
    }
    return inserted;
  }

  Outcome<std::vector<std::optional<ReportRow>>> find_reports(
      const std::vector<ReportKey>& keys) override {
    Statement s =
        statement("SELECT " + columns() + " FROM reports WHERE device_nonce = ? AND report_id = ?");
    if (!s.prepared()) return failure("find reports");
    std::vector<std::optional<ReportRow>> found(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      s.bind(keys[i].device_nonce, keys[i].report_id);
      const int rc = s.step();
      if (rc == SQLITE_ROW) found[i] = row(s.row());
      if (rc != SQLITE_ROW && rc != SQLITE_DONE) return failure("find reports");
    }
    return found;
  }

  Fallible delete_reports(const std::vector<ReportKey>& keys) override {
    Statement s = statement("DELETE FROM reports WHERE device_nonce = ? AND report_id = ?");
    if (!s.prepared()) return failure("delete reports");
    for (const ReportKey& key : keys) {
      s.bind(key.device_nonce, key.report_id);
      if (s.step() != SQLITE_DONE) return failure("delete reports");
    }
    return done();
  }

  Fallible scan_reports(uint32_t metric_id, int64_t from, int64_t to,
                        const std::function<bool(const ReportRow&)>& visit) override {
    return rows(
        "scan reports",
        "SELECT " + columns() +
            " FROM reports WHERE metric_id = ? AND bucket_start >= ? AND "
            "bucket_start < ? ORDER BY bucket_start",
        [&](sqlite3_stmt* s) { return visit(row(s)); }, metric_id, from, to);
  }

  Outcome<uint64_t> delete_reports_before(uint32_t metric_id, int64_t before) override {
    if (auto status =
            execute("prune reports", "DELETE FROM reports WHERE metric_id = ? AND bucket_start < ?",
                    metric_id, before);
        !status) {
      return status.error();
    }
    return static_cast<uint64_t>(sqlite3_changes64(db_));
  }

  Outcome<uint64_t> count_reports(std::optional<uint32_t> metric_id) override {
    if (metric_id) {
      return count("count reports", "SELECT COUNT(*) FROM reports WHERE metric_id = ?", *metric_id);
    }
    return count("count reports", "SELECT COUNT(*) FROM reports");
  }

  Outcome<std::optional<DeviceRow>> find_device(uint64_t device_nonce) override {
    std::optional<DeviceRow> found;
    bool corrupt = false;
    if (auto status = rows(
            "read a device",
            "SELECT enrolled_at, key_sha256, last_renewed_at FROM devices WHERE device_nonce = ?",
            [&](sqlite3_stmt* s) {
              DeviceRow row;
              row.device_nonce = device_nonce;
              row.enrolled_at = sqlite3_column_int64(s, 0);
              const std::string key = blob(s, 1);
              corrupt = key.size() != row.key_sha256.size();
              if (!corrupt) {
                std::copy(key.begin(), key.end(), row.key_sha256.begin());
                row.last_renewed_at = sqlite3_column_int64(s, 2);
                found = row;
              }
              return false;
            },
            device_nonce);
        !status) {
      return status.error();
    }
    if (corrupt) {
      return unavailable("device " + std::to_string(device_nonce) + " has a corrupt key digest in " +
                         path_);
    }
    return found;
  }

  Outcome<bool> insert_device(const DeviceRow& row) override {
    if (auto status =
            execute("enroll a device",
                    "INSERT INTO devices (device_nonce, enrolled_at, key_sha256, last_renewed_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    row.device_nonce, row.enrolled_at,
                    Blob{row.key_sha256.data(), row.key_sha256.size()}, row.last_renewed_at);
        !status) {
      return status.error();
    }
    return sqlite3_changes(db_) == 1;
  }

  Fallible set_device_renewed(uint64_t device_nonce, int64_t renewed_at) override {
    return execute("record a renewal",
                   "UPDATE devices SET last_renewed_at = ? WHERE device_nonce = ?", renewed_at,
                   device_nonce);
  }

  Outcome<bool> has_reports(uint64_t device_nonce) override {
    bool any = false;
    if (auto status = rows(
            "look for a device's reports", "SELECT 1 FROM reports WHERE device_nonce = ? LIMIT 1",
            [&](sqlite3_stmt*) {
              any = true;
              return false;
            },
            device_nonce);
        !status) {
      return status.error();
    }
    return any;
  }

  Outcome<uint64_t> count_devices_enrolled_since(int64_t since) override {
    return count("count devices", "SELECT COUNT(*) FROM devices WHERE enrolled_at >= ?", since);
  }

  Fallible ping() override {
    // Reads a table, not just the engine: the file must be readable.
    if (auto counted = count("query", "SELECT count(*) FROM blur_schema"); !counted) {
      return counted.error();
    }
    return done();
  }

  Fallible probe_write() override {
    if (auto status = exec("UPDATE blur_schema SET version = version"); !status) return status;
    return done();
  }

  // The main file and its write-ahead log (checkpoints move pages from one
  // to the other, so either alone would jump around).
  Outcome<uint64_t> size_bytes() override {
    struct stat main_file {};
    if (stat(path_.c_str(), &main_file) != 0) {
      return unavailable("cannot read the size of database " + path_);
    }
    uint64_t size = static_cast<uint64_t>(main_file.st_size);
    struct stat wal {};
    if (stat((path_ + "-wal").c_str(), &wal) == 0) size += static_cast<uint64_t>(wal.st_size);
    return size;
  }

  Outcome<std::vector<uint64_t>> add_device_counts(
      CountTable table, const std::vector<DeviceCountChange>& changes) override {
    const PeriodTableSql t = count_table_sql(table);
    const std::string key = std::string("metric_id, ") + t.period + ", device_nonce";
    Statement s = statement(std::string("INSERT INTO ") + t.table + " (" + key +
                            ", reports) VALUES (?, ?, ?, ?) ON CONFLICT (" + key +
                            ") DO UPDATE SET reports = reports + excluded.reports "
                            "RETURNING reports");
    if (!s.prepared()) return failure("count reports per device");
    std::vector<uint64_t> totals(changes.size(), 0);
    for (size_t i = 0; i < changes.size(); ++i) {
      s.bind(changes[i].metric_id, changes[i].period_start, changes[i].device_nonce,
             changes[i].delta);
      int rc = s.step();
      if (rc == SQLITE_ROW) {
        totals[i] = from_sql(sqlite3_column_int64(s.row(), 0));
        rc = s.step();
      }
      if (rc != SQLITE_DONE) return failure("count reports per device");
    }
    return totals;
  }

  Outcome<uint64_t> device_count(CountTable table, uint32_t metric_id, int64_t period_start,
                                 uint64_t device_nonce) override {
    const PeriodTableSql t = count_table_sql(table);
    return count("read a device's count",
                 std::string("SELECT reports FROM ") + t.table + " WHERE metric_id = ? AND " +
                     t.period + " = ? AND device_nonce = ?",
                 metric_id, period_start, device_nonce);
  }

  Outcome<std::vector<PeriodDeviceCounts>> device_count_sums(uint32_t metric_id, int64_t from,
                                                             int64_t to,
                                                             int64_t period_seconds) override {
    // The square in REAL: a device's count may pass 2^32 (SUM would fail on
    // an integer overflow).
    return collect(
        "sum report counts per device",
        "SELECT period, COUNT(*), SUM(m), SUM(CAST(m AS REAL) * m), MAX(m) FROM ("
        " SELECT CASE WHEN ?4 = 0 THEN 0"
        "  ELSE bucket_start - ((bucket_start % ?4) + ?4) % ?4 END AS period,"
        "  device_nonce, SUM(reports) AS m FROM report_counts"
        " WHERE metric_id = ?1 AND bucket_start >= ?2 AND bucket_start < ?3 AND reports > 0"
        " GROUP BY period, device_nonce)"
        " GROUP BY period ORDER BY period",
        [](sqlite3_stmt* s) {
          PeriodDeviceCounts p;
          p.period_start = sqlite3_column_int64(s, 0);
          p.counts.devices = from_sql(sqlite3_column_int64(s, 1));
          p.counts.reports = from_sql(sqlite3_column_int64(s, 2));
          p.counts.sum_squares = sqlite3_column_double(s, 3);
          p.counts.max_reports = from_sql(sqlite3_column_int64(s, 4));
          return p;
        },
        metric_id, from, to, period_seconds);
  }

  Fallible delete_device_counts_before(CountTable table, uint32_t metric_id,
                                       int64_t before) override {
    const PeriodTableSql t = count_table_sql(table);
    return execute(
        "prune report counts",
        std::string("DELETE FROM ") + t.table + " WHERE metric_id = ? AND " + t.period + " < ?",
        metric_id, before);
  }

  // In process, one statement per key costs no round trip.
  Outcome<std::vector<std::optional<AggregateRow>>> load_node_aggregates(
      AggregateTable table, int64_t node_id,
      const std::vector<std::pair<uint32_t, int64_t>>& keys) override {
    const PeriodTableSql t = aggregate_table_sql(table);
    std::vector<std::optional<AggregateRow>> found(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (auto status = rows(
              "load aggregate",
              std::string("SELECT metric_id, ") + t.period + ", node_id, reports, stats FROM " +
                  t.table + " WHERE metric_id = ? AND " + t.period + " = ? AND node_id = ?",
              [&](sqlite3_stmt* s) {
                found[i] = aggregate_row(s);
                return false;
              },
              keys[i].first, keys[i].second, node_id);
          !status) {
        return status.error();
      }
    }
    return found;
  }

  Fallible upsert_aggregates(AggregateTable table, const std::vector<AggregateRow>& rows) override {
    const PeriodTableSql t = aggregate_table_sql(table);
    for (const AggregateRow& r : rows) {
      if (auto status = execute(
              "store aggregate",
              std::string("INSERT INTO ") + t.table + " (metric_id, " + t.period +
                  ", node_id, reports, stats) VALUES (?, ?, ?, ?, ?) ON CONFLICT (metric_id, " +
                  t.period + ", node_id) DO UPDATE SET reports = excluded.reports, stats = "
                  "excluded.stats",
              r.metric_id, r.bucket_start, r.node_id, r.reports,
              Blob{r.stats.data(), r.stats.size()});
          !status) {
        return status;
      }
    }
    return done();
  }

  Outcome<std::vector<AggregateRow>> load_aggregates(uint32_t metric_id, int64_t from,
                                                     int64_t to) override {
    return collect("load aggregates",
                   "SELECT metric_id, bucket_start, node_id, reports, stats FROM aggregates "
                   "WHERE metric_id = ? AND bucket_start >= ? AND bucket_start < ? "
                   "ORDER BY bucket_start, node_id",
                   aggregate_row, metric_id, from, to);
  }

  Fallible delete_aggregates(uint32_t metric_id, int64_t from, int64_t to) override {
    if (auto status = execute("delete aggregates",
                              "DELETE FROM aggregates WHERE metric_id = ? AND bucket_start >= ? "
                              "AND bucket_start < ?",
                              metric_id, from, to);
        !status) {
      return status;
    }
    return execute("delete day aggregates",
                   "DELETE FROM day_aggregates WHERE metric_id = ? AND day_start >= ? AND "
                   "day_start < ?",
                   metric_id, first_day_overlapping(from), to);
  }

  Outcome<std::vector<int64_t>> metric_buckets(uint32_t metric_id) override {
    return collect(
        "list a metric's buckets",
        "SELECT bucket_start FROM reports WHERE metric_id = ?1 UNION "
        "SELECT bucket_start FROM aggregates WHERE metric_id = ?1 ORDER BY 1",
        [](sqlite3_stmt* s) { return static_cast<int64_t>(sqlite3_column_int64(s, 0)); },
        metric_id);
  }

  Fallible lock_buckets(const std::vector<std::pair<uint32_t, int64_t>>&, bool) override {
    return done();  // BEGIN IMMEDIATE: one write transaction at a time
  }

  bool partitions_reports() const override { return false; }
  Fallible prepare_report_partitions(const std::vector<int64_t>&) override { return done(); }
  Outcome<std::vector<int64_t>> report_partition_days() override {
    return std::vector<int64_t>{};
  }
  Outcome<std::vector<int64_t>> drop_report_partitions_before(int64_t) override {
    return std::vector<int64_t>{};
  }

  Outcome<std::vector<std::pair<uint32_t, int64_t>>> load_retired_metrics() override {
    return collect("load retired metrics",
                   "SELECT metric_id, retired_at FROM retired_metrics ORDER BY metric_id",
                   [](sqlite3_stmt* s) {
                     return std::pair<uint32_t, int64_t>(
                         static_cast<uint32_t>(sqlite3_column_int64(s, 0)),
                         static_cast<int64_t>(sqlite3_column_int64(s, 1)));
                   });
  }

  Outcome<int64_t> retire_metric(uint32_t metric_id, int64_t retired_at) override {
    if (auto status = execute("retire a metric",
                              "INSERT INTO retired_metrics (metric_id, retired_at) VALUES (?, ?) "
                              "ON CONFLICT DO NOTHING",
                              metric_id, retired_at);
        !status) {
      return status.error();
    }
    auto stored = count("read a retirement",
                        "SELECT retired_at FROM retired_metrics WHERE metric_id = ?", metric_id);
    if (!stored) return stored.error();
    return static_cast<int64_t>(stored.value());
  }

  Outcome<std::vector<AggregateRow>> load_aggregates_by_day(uint32_t metric_id, int64_t from,
                                                            int64_t to, int64_t days_from,
                                                            int64_t days_to) override {
    // ?4 and ?5 are midnights: a bucket lies in one of the range's whole
    // days exactly when its start is in [?4, ?5).
    return collect(
        "load aggregates",
        "SELECT metric_id, bucket_start, node_id, reports, stats FROM aggregates AS a "
        "WHERE a.metric_id = ?1 AND a.bucket_start >= ?2 AND a.bucket_start < ?3 "
        "AND NOT (a.bucket_start >= ?4 AND a.bucket_start < ?5 AND EXISTS ("
        " SELECT 1 FROM day_aggregates AS d WHERE d.metric_id = ?1"
        " AND d.day_start = a.bucket_start - ((a.bucket_start % 86400) + 86400) % 86400)) "
        "UNION ALL "
        "SELECT metric_id, day_start, node_id, reports, stats FROM day_aggregates "
        "WHERE metric_id = ?1 AND day_start >= ?4 AND day_start < ?5 "
        "ORDER BY 2, 3",
        aggregate_row, metric_id, from, to, days_from, days_to);
  }

  Outcome<std::vector<int64_t>> aggregate_bucket_starts(uint32_t metric_id, int64_t from,
                                                        int64_t to) override {
    return collect(
        "count buckets",
        "SELECT DISTINCT bucket_start FROM aggregates "
        "WHERE metric_id = ? AND bucket_start >= ? AND bucket_start < ? "
        "ORDER BY bucket_start",
        [](sqlite3_stmt* s) { return static_cast<int64_t>(sqlite3_column_int64(s, 0)); }, metric_id,
        from, to);
  }

  Outcome<std::vector<int64_t>> days_to_roll_up(uint32_t metric_id, int64_t before) override {
    return collect(
        "find days to roll up",
        "SELECT DISTINCT a.bucket_start - ((a.bucket_start % 86400) + 86400) % 86400 AS day "
        "FROM aggregates AS a WHERE a.metric_id = ?1 AND a.bucket_start < ?2 AND NOT EXISTS ("
        " SELECT 1 FROM day_aggregates AS d WHERE d.metric_id = ?1"
        " AND d.day_start = a.bucket_start - ((a.bucket_start % 86400) + 86400) % 86400) "
        "ORDER BY day",
        [](sqlite3_stmt* s) { return static_cast<int64_t>(sqlite3_column_int64(s, 0)); }, metric_id,
        before);
  }

  // Write transactions are BEGIN IMMEDIATE: one at a time in the whole
  // database, so nothing else to lock.
  Outcome<std::vector<bool>> lock_days(const std::vector<MetricDay>& days, bool) override {
    std::vector<bool> rolled;
    rolled.reserve(days.size());
    for (const MetricDay& day : days) {
      auto found = count("read a day's roll-up",
                         "SELECT COUNT(*) FROM (SELECT 1 FROM day_aggregates "
                         "WHERE metric_id = ? AND day_start = ? LIMIT 1)",
                         day.metric_id, day.day_start);
      if (!found) return found.error();
      rolled.push_back(*found != 0);
    }
    return rolled;
  }

 private:
  Fallible create_or_check() {
    auto has_table = [this](const char* name) {
      return count("read the schema",
                   "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
                   Text{std::string(name)});
    };
    auto has_version_table = has_table("blur_schema");
    if (!has_version_table) return has_version_table.error();
    if (*has_version_table == 0) {
      auto old_layout = has_table("reports");
      if (old_layout && *old_layout > 0) {
        return invalid("database " + path_ +
                       " was written by a collector before schema versions (Blur 0.1 at "
                       "627103b); this collector cannot read it. Keep it for that version, "
                       "or start a new database file");
      }
      if (auto status = exec(kSchema); !status) return status;
      if (auto status = exec(BLUR_SQLITE_REPORTS_INDEXES); !status) return status;
      if (auto status = exec(kDayAggregatesTable); !status) return status;
      return exec("INSERT INTO blur_schema (version) VALUES (" + std::to_string(kSchemaVersion) +
                  ")");
    }
    auto read_version = count("read the schema version", "SELECT MAX(version) FROM blur_schema");
    if (!read_version) return read_version.error();
    const int64_t version = static_cast<int64_t>(*read_version);
    if (version > kSchemaVersion) {
      return invalid("database " + path_ + " has schema version " + std::to_string(version) +
                     ", newer than this collector's (" + std::to_string(kSchemaVersion) +
                     "): upgrade the collector");
    }
    // IF NOT EXISTS: a check, and the new tables of each upgrade step.
    if (auto status = exec(kSchema); !status) return status;
    if (version < 2) {
      if (auto status = exec(kFillReportCounts); !status) return status;
    }
    if (version < 3) {
      if (auto status = exec(kFillReceiveCounts); !status) return status;
      if (auto status = exec(kAddDevices); !status) return status;
    }
    if (version < 4) {
      if (auto status = upgrade_3_to_4_retired_metrics(); !status) return status;
      if (auto status = upgrade_3_to_4_day_rollups(); !status) return status;
    }
    if (auto status = exec(kDayAggregatesTable); !status) return status;  // a check
    if (version < 5) return exec(kUpgrade4To5PeriodFirstKeys);
    return exec(BLUR_SQLITE_REPORTS_INDEXES);  // IF NOT EXISTS: a check
  }

  // Version 3 -> 4: day_aggregates, empty (the roll-up fills it for the
  // closed days; until then estimates read the bucket rows, as before).
  Fallible upgrade_3_to_4_day_rollups() {
    if (auto status = exec(kDayAggregatesTable); !status) return status;
    return exec("UPDATE blur_schema SET version = 4");
  }
  Fallible upgrade_3_to_4_retired_metrics() { return exec(kUpgrade3To4RetiredMetrics); }

  // The one statement helper: every query goes through statement() and one
  // of these (the loops over many keys use a Statement directly).
  //   execute: a statement that returns no rows.
  //   rows:    each row to `visit` until it returns false.
  //   collect: every row, each made a value by `read`.
  //   count:   the first column of the first row as an unsigned count (0
  //            without a row).
  template <typename... Values>
  Fallible execute(const char* what, const std::string& sql, const Values&... values) {
    Statement s = statement(sql);
    if (!s.prepared()) return failure(what);
    s.bind(values...);
    if (s.step() != SQLITE_DONE) return failure(what);
    return done();
  }
  template <typename Visit, typename... Values>
  Fallible rows(const char* what, const std::string& sql, Visit&& visit, const Values&... values) {
    Statement s = statement(sql);
    if (!s.prepared()) return failure(what);
    s.bind(values...);
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
      if (!visit(s.row())) return done();
    }
    if (rc != SQLITE_DONE) return failure(what);
    return done();
  }
  template <typename Read, typename... Values>
  auto collect(const char* what, const std::string& sql, Read read, const Values&... values)
      -> Outcome<std::vector<decltype(read(nullptr))>> {
    std::vector<decltype(read(nullptr))> found;
    if (auto status = rows(
            what, sql,
            [&](sqlite3_stmt* s) {
              found.push_back(read(s));
              return true;
            },
            values...);
        !status) {
      return status.error();
    }
    return found;
  }
  template <typename... Values>
  Outcome<uint64_t> count(const char* what, const std::string& sql, const Values&... values) {
    uint64_t value = 0;
    if (auto status = rows(
            what, sql,
            [&](sqlite3_stmt* s) {
              value = from_sql(sqlite3_column_int64(s, 0));
              return false;
            },
            values...);
        !status) {
      return status.error();
    }
    return value;
  }

  static std::string columns() {
    return "device_nonce, report_id, metric_id, epsilon_micros, device_minute, bucket_start, "
           "received_at, time_source, sdk_version, payload";
  }
  static ReportRow row(sqlite3_stmt* s) {
    ReportRow r;
    r.device_nonce = from_sql(sqlite3_column_int64(s, 0));
    r.report_id = from_sql(sqlite3_column_int64(s, 1));
    r.metric_id = static_cast<uint32_t>(sqlite3_column_int64(s, 2));
    r.epsilon_micros = static_cast<uint32_t>(sqlite3_column_int64(s, 3));
    r.device_minute = static_cast<uint32_t>(sqlite3_column_int64(s, 4));
    r.bucket_start = sqlite3_column_int64(s, 5);
    r.received_at = sqlite3_column_int64(s, 6);
    r.time_source = sqlite3_column_int64(s, 7) == 1 ? TimeSource::kDevice : TimeSource::kReceived;
    r.sdk_version = static_cast<uint32_t>(sqlite3_column_int64(s, 8));
    r.payload = blob(s, 9);
    return r;
  }
  static AggregateRow aggregate_row(sqlite3_stmt* s) {
    AggregateRow r;
    r.metric_id = static_cast<uint32_t>(sqlite3_column_int64(s, 0));
    r.bucket_start = sqlite3_column_int64(s, 1);
    r.node_id = sqlite3_column_int64(s, 2);
    r.reports = from_sql(sqlite3_column_int64(s, 3));
    r.stats = blob(s, 4);
    return r;
  }
  static std::string blob(sqlite3_stmt* s, int column) {
    const void* data = sqlite3_column_blob(s, column);
    return data ? std::string(static_cast<const char*>(data),
                              static_cast<size_t>(sqlite3_column_bytes(s, column)))
                : std::string();
  }
  static std::string text(sqlite3_stmt* s, int column) {
    const unsigned char* data = sqlite3_column_text(s, column);
    return data ? std::string(reinterpret_cast<const char*>(data),
                              static_cast<size_t>(sqlite3_column_bytes(s, column)))
                : std::string();
  }

  // Prepared once per connection and reused; its bindings cleared.
  Statement statement(const std::string& sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) {
      sqlite3_reset(it->second);
      sqlite3_clear_bindings(it->second);
      return Statement(it->second);
    }
    sqlite3_stmt* prepared = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &prepared, nullptr) != SQLITE_OK) {
      sqlite3_finalize(prepared);
      return Statement(nullptr);
    }
    statements_.emplace(sql, prepared);
    return Statement(prepared);
  }
  Fallible exec(const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      Error error = unavailable("database " + path_ + ": " +
                                (message ? message : sqlite3_errmsg(db_)));
      sqlite3_free(message);
      return error;
    }
    return done();
  }
  Error failure(const char* what) const {
    return unavailable(std::string("cannot ") + what + " in " + path_ + ": " +
                       sqlite3_errmsg(db_));
  }

  // After a lazy transaction: commits are synced again (lazy_ stays set
  // if that fails, and begin() tries again).
  void end_lazy() {
    if (lazy_ && exec("PRAGMA synchronous=FULL")) lazy_ = false;
  }

  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> statements_;
  bool lazy_ = false;  // synchronous=NORMAL: inside begin_lazy()'s transaction
  std::shared_ptr<WalSync> wal_sync_;
  std::shared_ptr<WalCheckpointer> checkpointer_;  // after db_: closed first
};

class SqliteDatabase final : public Database {
 public:
  explicit SqliteDatabase(std::string path)
      : path_(std::move(path)), checkpointer_(std::make_shared<WalCheckpointer>(path_)) {}

  Outcome<std::unique_ptr<Connection>> connect() override {
    // Without memory statistics SQLite's allocations take no global mutex
    // (5% of the store's CPU under device batches). Only possible before
    // SQLite initializes; if something else opened a database first, it
    // keeps the statistics (SQLITE_MISUSE, harmless).
    static const int kNoMemoryStatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    (void)kNoMemoryStatus;
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path_.c_str(), &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        nullptr) != SQLITE_OK) {
      Error error = unavailable("cannot open database " + path_ + ": " +
                                (db ? sqlite3_errmsg(db) : "out of memory"));
      sqlite3_close(db);
      return error;
    }
    sqlite3_busy_timeout(db, 10000);
    auto connection = std::make_unique<SqliteConnection>(db, path_, checkpointer_);
    // WAL: readers see the last commit and never block the writer.
    // synchronous=FULL: a commit has reached the disk when it returns.
    // A 256 MB page cache keeps the report index's hot pages in memory.
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
                               "PRAGMA cache_size=-262144", "PRAGMA temp_store=MEMORY"}) {
      char* message = nullptr;
      if (sqlite3_exec(db, pragma, nullptr, nullptr, &message) != SQLITE_OK) {
        Error error = unavailable("cannot initialize database " + path_ + ": " +
                                  (message ? message : sqlite3_errmsg(db)));
        sqlite3_free(message);
        return error;
      }
    }
    checkpointer_->attach(db);
    return std::unique_ptr<Connection>(std::move(connection));
  }

  std::string describe() const override { return "sqlite:" + path_; }

 private:
  std::string path_;
  std::shared_ptr<WalCheckpointer> checkpointer_;
};

// The database holds every report with its device nonce: readable by the
// collector's user only, like the credentials. SQLite gives the -wal and
// -shm files it creates the database file's mode, so making that one 0600
// before SQLite does (it would use 0644 less the umask) covers all three.
// Files of an earlier version are tightened the same way, best effort: if
// this user does not own them (a group member reading them) or the mount
// is read-only, they stay as they are until their owner's collector opens
// them.
void make_database_files_private(const std::string& path) {
  if (path == ":memory:") return;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);  // an empty file: SQLite makes it a new database
  for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
    struct stat info {};
    // Regular files only: `--db /dev/null` run as root must not make the
    // machine's /dev/null 0600 (which it did).
    if (::stat(file.c_str(), &info) == 0 && S_ISREG(info.st_mode) && (info.st_mode & 077) != 0) {
      (void)::chmod(file.c_str(), info.st_mode & 0700);
    }
  }
}

}  // namespace

Outcome<std::unique_ptr<Database>> open_sqlite_database(const std::string& path) {
  if (path.empty()) return invalid("empty SQLite database path");
  make_database_files_private(path);
  return std::unique_ptr<Database>(std::make_unique<SqliteDatabase>(path));
}

}  // namespace blur::collector::store
