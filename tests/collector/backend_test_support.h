// The parameterized fixture of backend_test.cpp: one Backend per database
// kind, each able to open a fresh, empty database and to tamper with it the
// way only a test would (set the schema version).
#ifndef BLUR_TESTS_COLLECTOR_BACKEND_TEST_SUPPORT_H
#define BLUR_TESTS_COLLECTOR_BACKEND_TEST_SUPPORT_H

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "postgres_test_db.h"
#include "store/backend.h"
#include "store/postgres/postgres_backend.h"

namespace blur::collector::store {

inline bool operator==(const ReportRow& a, const ReportRow& b) {
  return std::tie(a.device_nonce, a.report_id, a.metric_id, a.epsilon_micros, a.device_minute,
                  a.bucket_start, a.received_at, a.time_source, a.sdk_version, a.payload) ==
         std::tie(b.device_nonce, b.report_id, b.metric_id, b.epsilon_micros, b.device_minute,
                  b.bucket_start, b.received_at, b.time_source, b.sdk_version, b.payload);
}

inline void PrintTo(const ReportRow& r, std::ostream* out) {
  *out << "{nonce " << r.device_nonce << ", id " << r.report_id << ", metric " << r.metric_id
       << ", bucket " << r.bucket_start << ", payload " << testing::PrintToString(r.payload)
       << "}";
}

}  // namespace blur::collector::store

namespace blur_test {

using blur::collector::Outcome;
using blur::collector::store::Connection;
using blur::collector::store::Database;
using blur::collector::store::ReportRow;

inline ReportRow report(uint64_t nonce, uint64_t id, uint32_t metric, int64_t bucket,
                        std::string payload) {
  ReportRow row;
  row.device_nonce = nonce;
  row.report_id = id;
  row.metric_id = metric;
  row.epsilon_micros = 1000000;
  row.device_minute = 0;
  row.bucket_start = bucket;
  row.received_at = bucket + 1;
  row.sdk_version = 256;
  row.payload = std::move(payload);
  return row;
}

// An Outcome's value, or a test failure (with the error) and a default value.
template <typename T>
T value_or_fail(Outcome<T> outcome, const char* expression) {
  if (!outcome) {
    ADD_FAILURE() << expression << ": " << outcome.error().message;
    return T{};
  }
  return std::move(outcome).value();
}
#define VALUE(expression) ::blur_test::value_or_fail((expression), #expression)

template <typename T>
testing::AssertionResult succeeded(const Outcome<T>& outcome) {
  if (outcome) return testing::AssertionSuccess();
  return testing::AssertionFailure() << outcome.error().message;
}
#define ASSERT_OK(expression) ASSERT_TRUE(::blur_test::succeeded(expression))
#define EXPECT_OK(expression) EXPECT_TRUE(::blur_test::succeeded(expression))

class Backend {
 public:
  virtual ~Backend() = default;
  // Empty when the database is ready; otherwise why not.
  virtual std::string setup_error() const = 0;
  virtual Outcome<std::unique_ptr<Database>> open() = 0;
  virtual bool set_schema_version(int version, std::string* error) = 0;
};

// A fresh file in a temporary directory, opened as "sqlite:PATH".
class SqliteBackend : public Backend {
 public:
  SqliteBackend() {
    char pattern[] = "/tmp/blur-backend-test-XXXXXX";
    if (mkdtemp(pattern) != nullptr) dir_ = pattern;
  }
  ~SqliteBackend() override {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string setup_error() const override {
    return dir_.empty() ? "cannot create a temporary directory" : "";
  }
  Outcome<std::unique_ptr<Database>> open() override {
    return blur::collector::store::open_database("sqlite:" + path());
  }
  bool set_schema_version(int version, std::string* error) override {
    sqlite3* db = nullptr;
    bool good = sqlite3_open(path().c_str(), &db) == SQLITE_OK;
    const std::string sql = "UPDATE blur_schema SET version = " + std::to_string(version);
    char* message = nullptr;
    good = good && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK;
    if (!good) *error = message != nullptr ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    sqlite3_close(db);
    return good;
  }

 private:
  std::string path() const { return dir_ + "/blur.db"; }
  std::string dir_;
};

// A private schema on the `postgres` fixture's server, opened as its URL.
class PostgresBackend : public Backend {
 public:
  std::string setup_error() const override { return schema_.ok() ? "" : schema_.error(); }
  Outcome<std::unique_ptr<Database>> open() override {
    return blur::collector::store::open_database(schema_.url());
  }
  bool set_schema_version(int version, std::string* error) override {
    if (schema_.exec("UPDATE " + schema_.schema() +
                     ".blur_schema SET version = " + std::to_string(version))) {
      return true;
    }
    *error = schema_.error();
    return false;
  }
  PostgresTestSchema& schema() { return schema_; }

 private:
  PostgresTestSchema schema_;
};

inline std::vector<std::string> backend_names() { return {"sqlite", "postgresql"}; }

inline std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "sqlite") return std::make_unique<SqliteBackend>();
  if (name == "postgresql") return std::make_unique<PostgresBackend>();
  return nullptr;
}

class BackendTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = make_backend(GetParam());
    ASSERT_TRUE(backend_) << "no backend " << GetParam();
    ASSERT_EQ(backend_->setup_error(), "");
    auto database = backend_->open();
    ASSERT_TRUE(database) << database.error().message;
    database_ = std::move(database.value());
  }

  Backend& backend() { return *backend_; }
  Database& database() { return *database_; }

  // A new session; a failed connect fails the test and aborts it (the
  // nullptr it returns then crashes nothing: gtest stops at the fatal
  // failure in the caller's next ASSERT, or the test ends).
  std::unique_ptr<Connection> connect() {
    auto connection = database_->connect();
    if (!connection) {
      ADD_FAILURE() << "connect: " << connection.error().message;
      return std::make_unique<Unreachable>();
    }
    return std::move(connection.value());
  }
  std::unique_ptr<Connection> connect_with_schema() {
    auto connection = connect();
    auto schema = connection->ensure_schema();
    EXPECT_TRUE(schema) << schema.error().message;
    return connection;
  }

 private:
  // Stands in for a connection that could not be made: every call fails.
  class Unreachable : public Connection {
    using Error = blur::collector::Error;
    using Fallible = blur::collector::Fallible;
    static Error no() { return blur::collector::unavailable("no connection"); }
    Fallible ensure_schema() override { return no(); }
    Fallible begin() override { return no(); }
    Fallible begin_lazy() override { return no(); }
    Fallible commit() override { return no(); }
    void rollback() override {}
    Outcome<std::vector<std::pair<uint32_t, std::string>>> load_metrics() override {
      return no();
    }
    Outcome<bool> insert_metric(uint32_t, const std::string&) override { return no(); }
    Outcome<int64_t> register_node(const std::string&) override { return no(); }
    Outcome<std::vector<bool>> insert_reports(const std::vector<ReportRow>&, int64_t) override {
      return no();
    }
    Outcome<std::vector<std::optional<ReportRow>>> find_reports(
        const std::vector<blur::collector::store::ReportKey>&) override {
      return no();
    }
    Fallible delete_reports(const std::vector<blur::collector::store::ReportKey>&) override {
      return no();
    }
    Fallible scan_reports(uint32_t, int64_t, int64_t,
                          const std::function<bool(const ReportRow&)>&) override {
      return no();
    }
    Outcome<uint64_t> delete_reports_before(uint32_t, int64_t) override { return no(); }
    Outcome<uint64_t> count_reports(std::optional<uint32_t>) override { return no(); }
    Outcome<std::vector<std::optional<blur::collector::store::AggregateRow>>> load_node_aggregates(
        blur::collector::store::AggregateTable, int64_t,
        const std::vector<std::pair<uint32_t, int64_t>>&) override {
      return no();
    }
    Fallible upsert_aggregates(blur::collector::store::AggregateTable,
                               const std::vector<blur::collector::store::AggregateRow>&) override {
      return no();
    }
    Outcome<std::vector<blur::collector::store::AggregateRow>> load_aggregates(
        uint32_t, int64_t, int64_t) override {
      return no();
    }
    Fallible delete_aggregates(uint32_t, int64_t, int64_t) override { return no(); }
    Outcome<std::vector<int64_t>> metric_buckets(uint32_t) override { return no(); }
    Fallible lock_buckets(const std::vector<std::pair<uint32_t, int64_t>>&, bool) override {
      return no();
    }
    bool partitions_reports() const override { return false; }
    Fallible prepare_report_partitions(const std::vector<int64_t>&) override { return no(); }
    Outcome<std::vector<int64_t>> report_partition_days() override { return no(); }
    Outcome<std::vector<int64_t>> drop_report_partitions_before(int64_t) override { return no(); }
    Outcome<std::vector<std::pair<uint32_t, int64_t>>> load_retired_metrics() override {
      return no();
    }
    Outcome<int64_t> retire_metric(uint32_t, int64_t) override { return no(); }
    Outcome<std::vector<blur::collector::store::AggregateRow>> load_aggregates_by_day(
        uint32_t, int64_t, int64_t, int64_t, int64_t) override {
      return no();
    }
    Outcome<std::vector<int64_t>> aggregate_bucket_starts(uint32_t, int64_t, int64_t) override {
      return no();
    }
    Outcome<std::vector<int64_t>> days_to_roll_up(uint32_t, int64_t) override { return no(); }
    Outcome<std::vector<bool>> lock_days(const std::vector<blur::collector::store::MetricDay>&,
                                         bool) override {
      return no();
    }
    Fallible ping() override { return no(); }
    Fallible probe_write() override { return no(); }
    Outcome<uint64_t> size_bytes() override { return no(); }
    Outcome<std::vector<uint64_t>> add_device_counts(
        blur::collector::store::CountTable,
        const std::vector<blur::collector::store::DeviceCountChange>&) override {
      return no();
    }
    Outcome<uint64_t> device_count(blur::collector::store::CountTable, uint32_t, int64_t,
                                   uint64_t) override {
      return no();
    }
    Outcome<std::vector<blur::collector::PeriodDeviceCounts>> device_count_sums(uint32_t, int64_t,
                                                                                int64_t,
                                                                                int64_t) override {
      return no();
    }
    Fallible delete_device_counts_before(blur::collector::store::CountTable, uint32_t,
                                         int64_t) override {
      return no();
    }
    Outcome<std::optional<blur::collector::store::DeviceRow>> find_device(uint64_t) override {
      return no();
    }
    Outcome<bool> insert_device(const blur::collector::store::DeviceRow&) override { return no(); }
    Fallible set_device_renewed(uint64_t, int64_t) override { return no(); }
    Outcome<bool> has_reports(uint64_t) override { return no(); }
    Outcome<uint64_t> count_devices_enrolled_since(int64_t) override { return no(); }
  };

  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Database> database_;
};

}  // namespace blur_test

#endif  // BLUR_TESTS_COLLECTOR_BACKEND_TEST_SUPPORT_H
