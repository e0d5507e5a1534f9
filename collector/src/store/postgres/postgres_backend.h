// The collector's storage on PostgreSQL, so that several stateless collector
// processes can share one database (store/backend.h defines the operations).
//
// Built on libpq, PostgreSQL's own C client, rather than libpqxx: one layer
// fewer between us and the protocol, binary parameters and results (a batch
// of reports goes as a handful of binary arrays in one statement), and no
// exceptions to catch at our Outcome boundary.
//
// Values: uint64 columns (nonces, report ids, report counts) are stored as
// the int64 with the same bits, so a nonce >= 2^63 reads back negative in
// psql but exact here; uint32 values are stored as themselves.
//
// A lost connection fails the call with kUnavailable and marks the
// Connection broken(). Outside a transaction the next call reconnects
// transparently (a failed reconnect is kUnavailable again); inside one, every
// call fails until rollback(), since the server has rolled the transaction
// back with the connection. A commit() that fails with a lost connection may
// or may not have committed: report inserts are idempotent, so the caller
// retries the batch.
#ifndef BLUR_COLLECTOR_STORE_POSTGRES_POSTGRES_BACKEND_H
#define BLUR_COLLECTOR_STORE_POSTGRES_POSTGRES_BACKEND_H

#include <memory>
#include <set>
#include <string>

#include "store/backend.h"

namespace blur::collector::store {

namespace pg {
class Session;
}

class PostgresConnection : public Connection {
 public:
  explicit PostgresConnection(std::unique_ptr<pg::Session> session);
  ~PostgresConnection() override;

  // The connection to the server was lost (see the top of this file).
  bool broken() const;

  Fallible ensure_schema() override;
  Fallible begin() override;
  Fallible begin_lazy() override;
  Fallible commit() override;
  void rollback() override;
  Outcome<std::vector<std::pair<uint32_t, std::string>>> load_metrics() override;
  Outcome<bool> insert_metric(uint32_t id, const std::string& config) override;
  Outcome<int64_t> register_node(const std::string& description) override;
  Outcome<std::vector<bool>> insert_reports(const std::vector<ReportRow>& rows,
                                            int64_t duplicate_since) override;
  Outcome<std::vector<std::optional<ReportRow>>> find_reports(
      const std::vector<ReportKey>& keys) override;
  Fallible delete_reports(const std::vector<ReportKey>& keys) override;
  Fallible scan_reports(uint32_t metric_id, int64_t from, int64_t to,
                        const std::function<bool(const ReportRow&)>& visit) override;
  Outcome<uint64_t> delete_reports_before(uint32_t metric_id, int64_t before) override;
  Outcome<uint64_t> count_reports(std::optional<uint32_t> metric_id) override;
  Outcome<std::vector<uint64_t>> add_device_counts(
      CountTable table, const std::vector<DeviceCountChange>& changes) override;
  Outcome<uint64_t> device_count(CountTable table, uint32_t metric_id, int64_t period_start,
                                 uint64_t device_nonce) override;
  Outcome<std::vector<PeriodDeviceCounts>> device_count_sums(uint32_t metric_id, int64_t from,
                                                             int64_t to,
                                                             int64_t period_seconds) override;
  Fallible delete_device_counts_before(CountTable table, uint32_t metric_id,
                                       int64_t before) override;
  Outcome<std::vector<std::optional<AggregateRow>>> load_node_aggregates(
      AggregateTable table, int64_t node_id,
      const std::vector<std::pair<uint32_t, int64_t>>& keys) override;
  Fallible upsert_aggregates(AggregateTable table, const std::vector<AggregateRow>& rows) override;
  Outcome<std::vector<AggregateRow>> load_aggregates(uint32_t metric_id, int64_t from,
                                                     int64_t to) override;
  Fallible delete_aggregates(uint32_t metric_id, int64_t from, int64_t to) override;
  Outcome<std::vector<int64_t>> metric_buckets(uint32_t metric_id) override;
  Fallible lock_buckets(const std::vector<std::pair<uint32_t, int64_t>>& keys,
                        bool exclusive) override;
  bool partitions_reports() const override { return true; }
  Fallible prepare_report_partitions(const std::vector<int64_t>& bucket_starts) override;
  Outcome<std::vector<int64_t>> report_partition_days() override;
  Outcome<std::vector<int64_t>> drop_report_partitions_before(int64_t before) override;
  Outcome<std::vector<std::pair<uint32_t, int64_t>>> load_retired_metrics() override;
  Outcome<int64_t> retire_metric(uint32_t metric_id, int64_t retired_at) override;
  Outcome<std::vector<AggregateRow>> load_aggregates_by_day(uint32_t metric_id, int64_t from,
                                                            int64_t to, int64_t days_from,
                                                            int64_t days_to) override;
  Outcome<std::vector<int64_t>> aggregate_bucket_starts(uint32_t metric_id, int64_t from,
                                                        int64_t to) override;
  Outcome<std::vector<int64_t>> days_to_roll_up(uint32_t metric_id, int64_t before) override;
  Outcome<std::vector<bool>> lock_days(const std::vector<MetricDay>& days, bool exclusive) override;
  Outcome<std::optional<DeviceRow>> find_device(uint64_t device_nonce) override;
  Outcome<bool> insert_device(const DeviceRow& row) override;
  Fallible set_device_renewed(uint64_t device_nonce, int64_t renewed_at) override;
  Outcome<bool> has_reports(uint64_t device_nonce) override;
  Outcome<uint64_t> count_devices_enrolled_since(int64_t since) override;
  Fallible ping() override;
  Fallible probe_write() override;
  Outcome<uint64_t> size_bytes() override;

 private:
  // Before each operation: reconnects a broken connection between
  // transactions; refuses inside a transaction the server has lost.
  Fallible usable();
  Fallible create_or_check_schema();
  // Schema 3 -> 4, one function per change (postgres_partitions.cpp).
  Fallible upgrade_3_to_4_retired_metrics();
  Fallible upgrade_3_to_4_report_partitions();
  // Inside a transaction: the partitions of these buckets' days and of the
  // day after each exist (created under kSchemaLock when missing).
  Fallible ensure_partitions(const std::vector<int64_t>& bucket_starts);
  Fallible upgrade_3_to_4_day_rollups();
  Fallible scan_in_transaction(uint32_t metric_id, int64_t from, int64_t to,
                               const std::function<bool(const ReportRow&)>& visit);

  std::unique_ptr<pg::Session> session_;
  bool in_transaction_ = false;  // between begin() and commit()/rollback()
  unsigned scans_ = 0;           // names the scans' cursors
  // Day partitions known to exist; forgotten on a rollback (a partition
  // created in it is gone) and re-read from the catalog on a miss.
  std::set<int64_t> partition_days_;
};

class PostgresDatabase : public Database {
 public:
  // A libpq connection URI ("postgresql://user:password@host:port/db?...",
  // "postgres://..."). kInvalid if libpq cannot parse it. Connects nothing
  // yet: connect() does.
  static Outcome<std::unique_ptr<PostgresDatabase>> open(const std::string& url);

  Outcome<std::unique_ptr<Connection>> connect() override;
  // "postgresql://user@host:port/db", or for a Unix socket directory
  // "postgresql://user@/db?host=/dir"; never the password.
  std::string describe() const override { return description_; }

 private:
  PostgresDatabase(std::string url, std::string description, std::string password);

  std::string url_;
  std::string description_;
  std::string password_;  // only to scrub it from messages
};

// open_database()'s PostgreSQL branch.
Outcome<std::unique_ptr<Database>> open_postgres_database(const std::string& url);

}  // namespace blur::collector::store

#endif  // BLUR_COLLECTOR_STORE_POSTGRES_POSTGRES_BACKEND_H
