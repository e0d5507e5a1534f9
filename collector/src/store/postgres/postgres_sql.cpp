#include "store/postgres/postgres_sql.h"

#include "store/backend.h"

namespace blur::collector::store::pg::sql {

// 0x626c7572 is "blur" in ASCII: one lock key for the whole database.
const char* const kSchemaLock = "SELECT pg_advisory_xact_lock(1651275122)";
const char* const kSchemaTableExists = "SELECT to_regclass('blur_schema') IS NOT NULL";
const char* const kSelectSchemaVersion = "SELECT max(version) FROM blur_schema";

// Each table that an upgrade adds is written once, here, and used both by
// the fresh schema and by its upgrade (string literals, so they concatenate).
// The two per-device count tables share one shape: report_counts per bucket
// (the contribution bound), receive_counts per UTC day of arrival (the
// receive-time allowance); PERIOD names the period column. Keyed period
// first and device before metric since schema 5: a device batch's count rows
// (many metrics, one bucket and day) are adjacent, a few index pages per
// batch instead of one per metric.
// clang-format off
#define BLUR_PG_COUNT_TABLE(TABLE, PERIOD)   \
  "CREATE TABLE IF NOT EXISTS " TABLE " (\n" \
  "  metric_id BIGINT NOT NULL,\n"           \
  "  " PERIOD " BIGINT NOT NULL,\n"          \
  "  device_nonce BIGINT NOT NULL,\n"        \
  "  reports BIGINT NOT NULL,\n"             \
  "  PRIMARY KEY (" PERIOD ", device_nonce, metric_id));\n"
#define BLUR_PG_DEVICES_TABLE                 \
  "CREATE TABLE IF NOT EXISTS devices (\n"    \
  "  device_nonce BIGINT PRIMARY KEY,\n"      \
  "  enrolled_at BIGINT NOT NULL,\n"          \
  "  key_sha256 BYTEA NOT NULL,\n"            \
  "  last_renewed_at BIGINT NOT NULL);\n"     \
  "CREATE INDEX IF NOT EXISTS devices_by_enrollment ON devices (enrolled_at);\n"
// Raw reports, partitioned by UTC day of bucket_start (schema 4): retention
// drops a day's partition instead of deleting its rows. A partitioned
// table's primary key must contain the partition key, so (device_nonce,
// report_id) alone is no longer unique: kInsertReports looks for a key in
// the partitions of the duplicate window instead. blur_report_partition(day)
// creates one day's partition, named reports_YYYYMMDD, if it is missing.
#define BLUR_PG_PARTITIONED_REPORTS                                                      \
  "CREATE TABLE IF NOT EXISTS reports (\n"                                               \
  "  device_nonce BIGINT NOT NULL,\n"                                                    \
  "  report_id BIGINT NOT NULL,\n"                                                       \
  "  metric_id BIGINT NOT NULL,\n"                                                       \
  "  epsilon_micros BIGINT NOT NULL,\n"                                                  \
  "  device_minute BIGINT NOT NULL,\n"                                                   \
  "  bucket_start BIGINT NOT NULL,\n"                                                    \
  "  received_at BIGINT NOT NULL,\n"                                                     \
  "  time_source SMALLINT NOT NULL,\n"                                                   \
  "  sdk_version BIGINT NOT NULL,\n"                                                     \
  "  payload BYTEA NOT NULL,\n"                                                          \
  "  PRIMARY KEY (device_nonce, report_id, bucket_start)) PARTITION BY RANGE (bucket_start);\n" \
  "CREATE INDEX IF NOT EXISTS reports_metric_bucket ON reports (metric_id, bucket_start);\n" \
  "CREATE OR REPLACE FUNCTION blur_report_partition(day BIGINT) RETURNS VOID\n"          \
  "LANGUAGE plpgsql AS $f$\n"                                                            \
  "DECLARE name TEXT := 'reports_' || to_char(to_timestamp(day) AT TIME ZONE 'UTC', 'YYYYMMDD');\n" \
  "BEGIN\n"                                                                              \
  "  IF to_regclass(quote_ident(name)) IS NULL THEN\n"                                   \
  "    EXECUTE format('CREATE TABLE %I PARTITION OF reports FOR VALUES FROM (%s) TO (%s)',\n" \
  "                   name, day, day + 86400);\n"                                        \
  "  END IF;\n"                                                                          \
  "END $f$;\n"
#define BLUR_PG_RETIRED_METRICS                        \
  "CREATE TABLE IF NOT EXISTS retired_metrics (\n"     \
  "  metric_id BIGINT PRIMARY KEY,\n"                  \
  "  retired_at BIGINT NOT NULL);\n"
// Schema 4: day roll-up rows, one per (metric, UTC day, node), the sum of
// that node's bucket rows of the day (store/backend.h: AggregateTable::kDay).
#define BLUR_PG_DAY_AGGREGATES_TABLE                \
  "CREATE TABLE IF NOT EXISTS day_aggregates (\n"   \
  "  metric_id BIGINT NOT NULL,\n"                  \
  "  day_start BIGINT NOT NULL,\n"                  \
  "  node_id BIGINT NOT NULL,\n"                    \
  "  reports BIGINT NOT NULL,\n"                    \
  "  stats BYTEA NOT NULL,\n"                       \
  "  PRIMARY KEY (metric_id, day_start, node_id));\n"
// clang-format on

// Unqualified names: the tables go to the first schema on the search_path
// (the role's own schema, or public), so one database can hold several
// independent collectors' tables (the tests use one schema per test).
// NOT NULL everywhere the collector always writes a value.
static_assert(store::kSchemaVersion == 5, "kCreateSchema writes version 5");
const char* const kCreateSchema = R"(
CREATE TABLE IF NOT EXISTS blur_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (
  metric_id BIGINT PRIMARY KEY,
  config TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
  node_id BIGSERIAL PRIMARY KEY,
  started_at BIGINT,
  description TEXT);
)" BLUR_PG_PARTITIONED_REPORTS R"(
CREATE TABLE IF NOT EXISTS aggregates (
  metric_id BIGINT NOT NULL,
  bucket_start BIGINT NOT NULL,
  node_id BIGINT NOT NULL,
  reports BIGINT NOT NULL,
  stats BYTEA NOT NULL,
  PRIMARY KEY (metric_id, bucket_start, node_id));
)" BLUR_PG_COUNT_TABLE("report_counts", "bucket_start")
    BLUR_PG_DEVICES_TABLE BLUR_PG_COUNT_TABLE("receive_counts", "day_start")
        BLUR_PG_RETIRED_METRICS BLUR_PG_DAY_AGGREGATES_TABLE R"(
INSERT INTO blur_schema (version) VALUES (5);
)";

// Version 1 -> 2 (under kSchemaLock): the contribution bound's counts, from
// the reports stored so far.
const char* const kUpgradeToVersion2 = BLUR_PG_COUNT_TABLE("report_counts", "bucket_start") R"(
INSERT INTO report_counts (metric_id, bucket_start, device_nonce, reports)
  SELECT metric_id, bucket_start, device_nonce, count(*) FROM reports
  GROUP BY metric_id, bucket_start, device_nonce;
UPDATE blur_schema SET version = 2;
)";

// Version 2 -> 3 (under kSchemaLock): enrollment's bindings, empty (each
// device binds its key at its next enrollment).
const char* const kUpgradeToVersion3 = BLUR_PG_DEVICES_TABLE R"(
UPDATE blur_schema SET version = 3;
)";

// Version 2 -> 3 (under kSchemaLock): the receive-time allowance's counts,
// per UTC day of arrival, from the reports stored so far.
const char* const kUpgradeToVersion3ReceiveCounts =
    BLUR_PG_COUNT_TABLE("receive_counts", "day_start") R"(
INSERT INTO receive_counts (metric_id, day_start, device_nonce, reports)
  SELECT metric_id, received_at - ((received_at % 86400) + 86400) % 86400, device_nonce,
         count(*) FROM reports
  GROUP BY 1, 2, 3;
UPDATE blur_schema SET version = 3;
)";

// Version 3 -> 4 (under kSchemaLock), in two steps that the collector runs
// one after the other. Retired metrics: an empty table.
const char* const kUpgrade3To4RetiredMetrics = BLUR_PG_RETIRED_METRICS R"(
UPDATE blur_schema SET version = 4;
)";

// Daily partitions: the version-3 table is renamed, a partition made for
// each day it has reports of, its rows moved, and it is dropped, all in the
// upgrade's transaction (collectors wait on kSchemaLock meanwhile).
const char* const kUpgrade3To4ReportPartitions = R"(
ALTER TABLE reports RENAME TO reports_version_3;
ALTER INDEX IF EXISTS reports_pkey RENAME TO reports_version_3_pkey;
ALTER INDEX IF EXISTS reports_metric_bucket RENAME TO reports_version_3_metric_bucket;
)" BLUR_PG_PARTITIONED_REPORTS R"(
SELECT blur_report_partition(day) FROM (
  SELECT DISTINCT bucket_start - ((bucket_start % 86400) + 86400) % 86400 AS day
  FROM reports_version_3) AS days;
INSERT INTO reports SELECT device_nonce, report_id, metric_id, epsilon_micros, device_minute,
  bucket_start, received_at, time_source, sdk_version, payload FROM reports_version_3;
DROP TABLE reports_version_3;
UPDATE blur_schema SET version = 4;
)";

// Whether `reports` is partitioned already (one row: 't' or 'f').
const char* const kReportsPartitioned =
    "SELECT relkind = 'p' FROM pg_class WHERE oid = to_regclass('reports')";

// Version 3 -> 4 (under kSchemaLock): day roll-up rows, empty (the roll-up
// fills them for closed days; until then estimates read the bucket rows).
const char* const kUpgrade3To4DayRollups = BLUR_PG_DAY_AGGREGATES_TABLE R"(
UPDATE blur_schema SET version = 4;
)";

// Version 4 -> 5 (under kSchemaLock): the count tables' primary keys period
// first (BLUR_PG_COUNT_TABLE), rebuilt in the upgrade's transaction.
const char* const kUpgrade4To5PeriodFirstKeys = R"(
ALTER TABLE report_counts DROP CONSTRAINT report_counts_pkey;
ALTER TABLE report_counts ADD CONSTRAINT report_counts_pkey
  PRIMARY KEY (bucket_start, device_nonce, metric_id);
ALTER TABLE receive_counts DROP CONSTRAINT receive_counts_pkey;
ALTER TABLE receive_counts ADD CONSTRAINT receive_counts_pkey
  PRIMARY KEY (day_start, device_nonce, metric_id);
UPDATE blur_schema SET version = 5;
)";

const char* const kReportColumns =
    "device_nonce, report_id, metric_id, epsilon_micros, device_minute, bucket_start, "
    "received_at, time_source, sdk_version, payload";

namespace {
constexpr unsigned kInt8 = kInt8Oid;
constexpr unsigned kInt8s = kInt8ArrayOid;
}  // namespace

// Statement ids index the session's prepared flags: distinct, < kMaxStatements.
const Statement kLoadMetrics{0, "load metrics",
                             "SELECT metric_id, config FROM metrics ORDER BY metric_id", {}};
const Statement kInsertMetric{
    1, "insert metric",
    "INSERT INTO metrics (metric_id, config) VALUES ($1, $2) ON CONFLICT (metric_id) DO NOTHING",
    {kInt8, kTextOid}};
const Statement kRegisterNode{
    2, "register node",
    "INSERT INTO nodes (started_at, description) "
    "VALUES (extract(epoch FROM now())::bigint, $1) RETURNING node_id",
    {kTextOid}};

// One statement for a whole batch: ten binary arrays, unnest()ed into rows.
// Rows whose key is stored in a partition from $11 on (the duplicate
// window) are skipped; kLockDevices, taken first in the transaction, makes
// the writers of one device nonce take turns, so the NOT EXISTS sees every
// committed row of the nonce (READ COMMITTED: each statement sees what was
// committed before it began). ON CONFLICT covers a key resent into the same
// bucket, where the primary key sees it too. RETURNING names the rows
// actually inserted.
const Statement kInsertReports{
    3, "insert reports",
    "INSERT INTO reports (device_nonce, report_id, metric_id, epsilon_micros, device_minute, "
    "bucket_start, received_at, time_source, sdk_version, payload) "
    "SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::int8[], "
    "$6::int8[], $7::int8[], $8::int2[], $9::int8[], $10::bytea[]) "
    "AS n(nonce, id, m, e, dm, b, r, t, v, p) "
    "WHERE NOT EXISTS (SELECT 1 FROM reports s WHERE s.device_nonce = n.nonce "
    "AND s.report_id = n.id AND s.bucket_start >= $11) "
    "ON CONFLICT DO NOTHING RETURNING device_nonce, report_id",
    {kInt8s, kInt8s, kInt8s, kInt8s, kInt8s, kInt8s, kInt8s, kInt2ArrayOid, kInt8s,
     kByteaArrayOid, kInt8}};
// The writers of a device nonce take turns (a batch is one device's): a
// transaction-scoped advisory lock per nonce, in ascending order (no two
// writers wait for each other's locks in a cycle). The one-bigint key space;
// buckets use the two-int4 one.
const Statement kLockDevices{
    29, "lock device nonces",
    "SELECT count(pg_advisory_xact_lock(n)) FROM "
    "(SELECT DISTINCT n FROM unnest($1::int8[]) AS n ORDER BY n) AS nonces",
    {kInt8s}};
// (metric, bucket) locks: the metric id as an int4 (shifted by 2^31), the
// bucket start in minutes (a bucket is whole minutes). Shared for writers,
// exclusive for a rebuild.
const Statement kLockBucketsShared{
    30, "lock buckets",
    "SELECT count(pg_advisory_xact_lock_shared((m - 2147483648)::int4, (b / 60)::int4)) FROM "
    "unnest($1::int8[], $2::int8[]) AS k(m, b)",
    {kInt8s, kInt8s}};
const Statement kLockBucketsExclusive{
    31, "lock buckets for a rebuild",
    "SELECT count(pg_advisory_xact_lock((m - 2147483648)::int4, (b / 60)::int4)) FROM "
    "unnest($1::int8[], $2::int8[]) AS k(m, b)",
    {kInt8s, kInt8s}};
// Creates the day partitions $1 lacks (under kSchemaLock: two collectors
// creating the same partition would collide in the catalog).
const Statement kEnsurePartitions{
    32, "create report partitions",
    "SELECT count(blur_report_partition(d)) FROM unnest($1::int8[]) AS d", {kInt8s}};
// Every partition of reports: name, day start (from its bound), whether a
// DETACH ... CONCURRENTLY of it was interrupted.
const Statement kReportPartitions{
    33, "list report partitions",
    "SELECT c.relname::text, (regexp_match(pg_get_expr(c.relpartbound, c.oid), "
    "'FROM \\(''?(-?[0-9]+)'))[1]::int8, i.inhdetachpending "
    "FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
    "WHERE i.inhparent = to_regclass('reports') ORDER BY 2",
    {}};
// Tables a drop detached but did not drop (it was interrupted).
const Statement kDetachedPartitions{
    34, "list detached partitions",
    "SELECT c.relname::text FROM pg_class c "
    "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' "
    "AND NOT c.relispartition AND c.relname ~ '^reports_[0-9]+$'",
    {}};
const Statement kMetricBuckets{
    35, "list a metric's buckets",
    "SELECT bucket_start FROM reports WHERE metric_id = $1 UNION "
    "SELECT bucket_start FROM aggregates WHERE metric_id = $1 ORDER BY 1",
    {kInt8}};
const Statement kLoadRetiredMetrics{
    36, "load retired metrics",
    "SELECT metric_id, retired_at FROM retired_metrics ORDER BY metric_id", {}};
// The first retirement stands: the upsert's no-op update returns the stored time.
const Statement kRetireMetric{
    37, "retire a metric",
    "INSERT INTO retired_metrics AS r (metric_id, retired_at) VALUES ($1, $2) "
    "ON CONFLICT (metric_id) DO UPDATE SET retired_at = r.retired_at RETURNING retired_at",
    {kInt8, kInt8}};
const Statement kFindReports{
    4, "find reports",
    "SELECT r.device_nonce, r.report_id, r.metric_id, r.epsilon_micros, r.device_minute, "
    "r.bucket_start, r.received_at, r.time_source, r.sdk_version, r.payload "
    "FROM reports r JOIN unnest($1::int8[], $2::int8[]) AS k(nonce, id) "
    "ON r.device_nonce = k.nonce AND r.report_id = k.id",
    {kInt8s, kInt8s}};
const Statement kDeleteReports{
    5, "delete reports",
    "DELETE FROM reports r USING unnest($1::int8[], $2::int8[]) AS k(nonce, id) "
    "WHERE r.device_nonce = k.nonce AND r.report_id = k.id",
    {kInt8s, kInt8s}};
const Statement kDeleteReportsBefore{
    6, "delete old reports", "DELETE FROM reports WHERE metric_id = $1 AND bucket_start < $2",
    {kInt8, kInt8}};
const Statement kCountReports{7, "count reports", "SELECT count(*) FROM reports", {}};
const Statement kCountMetricReports{
    8, "count reports", "SELECT count(*) FROM reports WHERE metric_id = $1", {kInt8}};

// One node's rows of an aggregate table (per bucket, or per day since
// schema 4) for a commit's keys: read them (each with its key's 1-based
// position), write them, one statement each. PERIOD names the start column.
// clang-format off
#define BLUR_PG_AGGREGATE_ROW_STATEMENTS(TABLE, PERIOD, LOAD, LOAD_ID, LOAD_NAME, UPSERT,      \
                                         UPSERT_ID, UPSERT_NAME)                               \
  const Statement LOAD{LOAD_ID, LOAD_NAME,                                                     \
      "SELECT k.position, a.reports, a.stats FROM unnest($1::int8[], $2::int8[]) "              \
      "WITH ORDINALITY AS k(metric_id, start, position) JOIN " TABLE " AS a "                  \
      "ON a.metric_id = k.metric_id AND a." PERIOD " = k.start AND a.node_id = $3",            \
      {kInt8s, kInt8s, kInt8}};                                                                \
  const Statement UPSERT{UPSERT_ID, UPSERT_NAME,                                               \
      "INSERT INTO " TABLE " (metric_id, " PERIOD ", node_id, reports, stats) "                \
      "SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::bytea[]) "     \
      "ON CONFLICT (metric_id, " PERIOD ", node_id) "                                          \
      "DO UPDATE SET reports = EXCLUDED.reports, stats = EXCLUDED.stats",                      \
      {kInt8s, kInt8s, kInt8s, kInt8s, kByteaArrayOid}}
BLUR_PG_AGGREGATE_ROW_STATEMENTS("aggregates", "bucket_start",
                                 kLoadAggregate, 9, "load aggregate",
                                 kUpsertAggregate, 10, "store aggregate");
BLUR_PG_AGGREGATE_ROW_STATEMENTS("day_aggregates", "day_start",
                                 kLoadDayAggregate, 40, "load day aggregate",
                                 kUpsertDayAggregate, 41, "store day aggregate");
// clang-format on
#undef BLUR_PG_AGGREGATE_ROW_STATEMENTS
const Statement kLoadAggregates{
    11, "load aggregates",
    "SELECT bucket_start, node_id, reports, stats FROM aggregates "
    "WHERE metric_id = $1 AND bucket_start >= $2 AND bucket_start < $3 "
    "ORDER BY bucket_start, node_id",
    {kInt8, kInt8, kInt8}};
const Statement kDeleteAggregates{
    12, "delete aggregates",
    "DELETE FROM aggregates WHERE metric_id = $1 AND bucket_start >= $2 AND bucket_start < $3",
    {kInt8, kInt8, kInt8}};

// Day roll-ups (schema 4). The day of a bucket start t is
// t - ((t % 86400) + 86400) % 86400 (a floor also for t < 0).
#define BLUR_PG_DAY_OF(T) T " - ((" T " % 86400) + 86400) % 86400"
// $4, $5: midnights, the range's whole days (store/backend.h).
const Statement kLoadAggregatesByDay{
    42, "load aggregates",
    "SELECT a.bucket_start, a.node_id, a.reports, a.stats FROM aggregates AS a "
    "WHERE a.metric_id = $1 AND a.bucket_start >= $2 AND a.bucket_start < $3 "
    "AND NOT (a.bucket_start >= $4 AND a.bucket_start < $5 AND EXISTS ("
    " SELECT 1 FROM day_aggregates AS d WHERE d.metric_id = $1"
    " AND d.day_start = " BLUR_PG_DAY_OF("a.bucket_start") ")) "
    "UNION ALL "
    "SELECT day_start, node_id, reports, stats FROM day_aggregates "
    "WHERE metric_id = $1 AND day_start >= $4 AND day_start < $5 "
    "ORDER BY 1, 2",
    {kInt8, kInt8, kInt8, kInt8, kInt8}};
const Statement kAggregateBucketStarts{
    43, "count buckets",
    "SELECT DISTINCT bucket_start FROM aggregates "
    "WHERE metric_id = $1 AND bucket_start >= $2 AND bucket_start < $3 ORDER BY bucket_start",
    {kInt8, kInt8, kInt8}};
const Statement kDaysToRollUp{
    44, "find days to roll up",
    "SELECT DISTINCT " BLUR_PG_DAY_OF("a.bucket_start") " AS day FROM aggregates AS a "
    "WHERE a.metric_id = $1 AND a.bucket_start < $2 AND NOT EXISTS ("
    " SELECT 1 FROM day_aggregates AS d WHERE d.metric_id = $1"
    " AND d.day_start = " BLUR_PG_DAY_OF("a.bucket_start") ") ORDER BY day",
    {kInt8, kInt8}};
// Transaction-scoped advisory locks in the two-int4 key space (apart from
// kSchemaLock's one bigint): (metric id's bits, day number). Shared locks
// never conflict with each other and an exclusive one is taken alone, so
// their order cannot deadlock.
#define BLUR_PG_LOCK_DAYS(FUNCTION)                                                     \
  "SELECT count(" FUNCTION "((k.m - CASE WHEN k.m >= 2147483648 THEN 4294967296 ELSE 0 END)" \
  "::int4, ((k.d / 86400) % 2147483647)::int4)) FROM unnest($1::int8[], $2::int8[]) AS k(m, d)"
const Statement kLockDaysShared{
    45, "lock days", BLUR_PG_LOCK_DAYS("pg_advisory_xact_lock_shared"), {kInt8s, kInt8s}};
const Statement kLockDaysExclusive{
    46, "lock a day", BLUR_PG_LOCK_DAYS("pg_advisory_xact_lock"), {kInt8s, kInt8s}};
#undef BLUR_PG_LOCK_DAYS
// After the lock (a statement of its own: its snapshot is taken once the
// lock is held), which days have day rows, in the keys' order.
const Statement kDaysRolledUp{
    47, "read days' roll-ups",
    "SELECT (EXISTS (SELECT 1 FROM day_aggregates AS d WHERE d.metric_id = k.m AND "
    "d.day_start = k.d))::int::int8 FROM unnest($1::int8[], $2::int8[]) WITH ORDINALITY AS k(m, d, i) "
    "ORDER BY k.i",
    {kInt8s, kInt8s}};
const Statement kDeleteDayAggregates{
    48, "delete day aggregates",
    "DELETE FROM day_aggregates WHERE metric_id = $1 AND day_start >= $2 AND day_start < $3",
    {kInt8, kInt8, kInt8}};
#undef BLUR_PG_DAY_OF
// Reads a table of ours (not just SELECT 1): the search_path's schema must be there.
const Statement kPing{13, "ping", "SELECT count(*) FROM blur_schema", {}};
// A write that changes nothing, for readiness while commits fail: it needs
// what a commit needs (a writable database, room for its log).
const Statement kProbeWrite{19, "probe a write", "UPDATE blur_schema SET version = version", {}};
// The collector's own tables (with their indexes and TOAST) in its schema, not
// the whole database: other schemas on the same server are not ours to count.
const Statement kStoreSize{
    14, "store size",
    "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relkind = 'r'",
    {}};

// The per-device counts: the same three statements on each count table
// (add to counts, read one, prune old ones), each named by its variable,
// statement id and name for messages. The upsert locks each count row until
// the transaction ends: a concurrent writer of the same key waits, then adds
// to the committed count.
// clang-format off
#define BLUR_PG_COUNT_STATEMENTS(TABLE, PERIOD, ADD, ADD_ID, ADD_NAME, ONE, ONE_ID, ONE_NAME,   \
                                 PRUNE, PRUNE_ID, PRUNE_NAME)                                  \
  const Statement ADD{ADD_ID, ADD_NAME,                                                        \
      "INSERT INTO " TABLE " AS c (metric_id, " PERIOD ", device_nonce, reports) "             \
      "SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[]) "                  \
      "ON CONFLICT (metric_id, " PERIOD ", device_nonce) "                                     \
      "DO UPDATE SET reports = c.reports + EXCLUDED.reports "                                  \
      "RETURNING metric_id, " PERIOD ", device_nonce, reports",                                \
      {kInt8s, kInt8s, kInt8s, kInt8s}};                                                      \
  const Statement ONE{ONE_ID, ONE_NAME,                                                        \
      "SELECT reports FROM " TABLE                                                             \
      " WHERE metric_id = $1 AND " PERIOD " = $2 AND device_nonce = $3",                       \
      {kInt8, kInt8, kInt8}};                                                                  \
  const Statement PRUNE{PRUNE_ID, PRUNE_NAME,                                                  \
      "DELETE FROM " TABLE " WHERE metric_id = $1 AND " PERIOD " < $2", {kInt8, kInt8}}
BLUR_PG_COUNT_STATEMENTS("report_counts", "bucket_start",
                         kAddDeviceCounts, 22, "count reports per device",
                         kDeviceCount, 23, "read a device's count",
                         kDeleteDeviceCountsBefore, 15, "prune report counts");
BLUR_PG_COUNT_STATEMENTS("receive_counts", "day_start",
                         kAddReceiveCounts, 17, "count reports per device and day",
                         kReceiveCount, 18, "read a device's count of a day",
                         kDeleteReceiveCountsBefore, 20, "prune receive counts");
// clang-format on
#undef BLUR_PG_COUNT_STATEMENTS

// Per period, each device's reports summed over its buckets; the square in
// float8 (a count may pass 2^32).
const Statement kDeviceCountSums{
    16,
    "sum report counts per device",
    "SELECT period, count(*)::int8, sum(m)::int8, sum(m::float8 * m), max(m) FROM ("
    " SELECT CASE WHEN $4::int8 = 0 THEN 0::int8"
    "  ELSE bucket_start - ((bucket_start % $4::int8) + $4::int8) % $4::int8 END AS period,"
    "  device_nonce, sum(reports)::int8 AS m FROM report_counts"
    " WHERE metric_id = $1 AND bucket_start >= $2 AND bucket_start < $3 AND reports > 0"
    " GROUP BY 1, device_nonce) AS d"
    " GROUP BY period ORDER BY period",
    {kInt8, kInt8, kInt8, kInt8}};

// Devices (enrollment's bindings). ON CONFLICT DO NOTHING waits for a
// concurrent uncommitted insert of the nonce, then skips: a later
// kFindDevice sees the winner.
const Statement kFindDevice{
    24, "read a device",
    "SELECT enrolled_at, key_sha256, last_renewed_at FROM devices WHERE device_nonce = $1",
    {kInt8}};
const Statement kInsertDevice{
    25, "enroll a device",
    "INSERT INTO devices (device_nonce, enrolled_at, key_sha256, last_renewed_at) "
    "VALUES ($1, $2, $3, $4) ON CONFLICT (device_nonce) DO NOTHING",
    {kInt8, kInt8, kByteaOid, kInt8}};
const Statement kSetDeviceRenewed{
    26, "record a renewal", "UPDATE devices SET last_renewed_at = $2 WHERE device_nonce = $1",
    {kInt8, kInt8}};
const Statement kHasReports{
    27, "look for a device's reports",
    "SELECT count(*) FROM (SELECT 1 FROM reports WHERE device_nonce = $1 LIMIT 1) AS r",
    {kInt8}};
const Statement kCountDevicesSince{
    28, "count devices", "SELECT count(*) FROM devices WHERE enrolled_at >= $1", {kInt8}};

const std::vector<const Statement*>& all_statements() {
  static const std::vector<const Statement*> all = {
      &kLoadMetrics,   &kInsertMetric,    &kRegisterNode,      &kInsertReports,
      &kFindReports,   &kDeleteReports,   &kDeleteReportsBefore, &kCountReports,
      &kCountMetricReports, &kLoadAggregate, &kUpsertAggregate, &kLoadAggregates,
      &kDeleteAggregates, &kPing,        &kProbeWrite,        &kStoreSize,
      &kAddDeviceCounts, &kDeviceCount,  &kDeviceCountSums,   &kDeleteDeviceCountsBefore,
      &kFindDevice,    &kInsertDevice,    &kSetDeviceRenewed,  &kHasReports,
      &kCountDevicesSince, &kAddReceiveCounts, &kReceiveCount, &kDeleteReceiveCountsBefore,
      &kLockDevices,   &kLockBucketsShared, &kLockBucketsExclusive, &kEnsurePartitions,
      &kReportPartitions, &kDetachedPartitions, &kMetricBuckets, &kLoadRetiredMetrics,
      &kRetireMetric, &kLoadDayAggregate, &kUpsertDayAggregate, &kLoadAggregatesByDay,
      &kAggregateBucketStarts, &kDaysToRollUp, &kLockDaysShared, &kLockDaysExclusive,
      &kDaysRolledUp, &kDeleteDayAggregates};
  return all;
}

}  // namespace blur::collector::store::pg::sql
