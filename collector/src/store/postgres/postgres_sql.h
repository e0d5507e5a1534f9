// Every SQL text the PostgreSQL backend sends, in one place.
#ifndef BLUR_COLLECTOR_STORE_POSTGRES_POSTGRES_SQL_H
#define BLUR_COLLECTOR_STORE_POSTGRES_POSTGRES_SQL_H

#include <vector>

#include "store/postgres/pg_session.h"

namespace blur::collector::store::pg::sql {

// ensure_schema(): taken first, in the same transaction, so that collectors
// starting together on an empty database create the tables once (two
// concurrent CREATE TABLE IF NOT EXISTS can both fail on the catalog's unique
// index). Transaction-scoped: released by the COMMIT or ROLLBACK.
extern const char* const kSchemaLock;
extern const char* const kSchemaTableExists;  // one row: 't' or 'f'
extern const char* const kSelectSchemaVersion;  // one row: the version or NULL
extern const char* const kCreateSchema;       // the tables at kSchemaVersion; version row
extern const char* const kUpgradeToVersion2;  // from version 1: report_counts, filled
extern const char* const kUpgradeToVersion3;  // from version 2: devices, empty
extern const char* const kUpgradeToVersion3ReceiveCounts;  // from 2: receive_counts, filled
extern const char* const kUpgrade3To4RetiredMetrics;    // from 3: retired_metrics, empty
extern const char* const kUpgrade3To4ReportPartitions;  // from 3: reports into daily partitions
extern const char* const kReportsPartitioned;           // one row: 't' or 'f'
extern const char* const kUpgrade3To4DayRollups;  // from 3: day_aggregates, empty
extern const char* const kUpgrade4To5PeriodFirstKeys;  // from 4: count tables keyed period first

// Columns of a report, in ReportRow's order, as read by find and scan.
extern const char* const kReportColumns;

extern const Statement kLoadMetrics;
extern const Statement kInsertMetric;
extern const Statement kRegisterNode;
extern const Statement kInsertReports;
extern const Statement kFindReports;
extern const Statement kDeleteReports;
extern const Statement kDeleteReportsBefore;
extern const Statement kCountReports;
extern const Statement kCountMetricReports;
extern const Statement kLoadAggregate;
extern const Statement kUpsertAggregate;
extern const Statement kLoadAggregates;
extern const Statement kDeleteAggregates;
extern const Statement kPing;
extern const Statement kProbeWrite;
extern const Statement kStoreSize;
extern const Statement kAddDeviceCounts;
extern const Statement kDeviceCount;
extern const Statement kDeviceCountSums;
extern const Statement kDeleteDeviceCountsBefore;
extern const Statement kFindDevice;
extern const Statement kInsertDevice;
extern const Statement kSetDeviceRenewed;
extern const Statement kHasReports;
extern const Statement kCountDevicesSince;
extern const Statement kLockDevices;
extern const Statement kLockBucketsShared;
extern const Statement kLockBucketsExclusive;
extern const Statement kEnsurePartitions;
extern const Statement kReportPartitions;
extern const Statement kDetachedPartitions;
extern const Statement kMetricBuckets;
extern const Statement kLoadRetiredMetrics;
extern const Statement kRetireMetric;

// Every statement above: their ids must be distinct (a test checks it), or
// a session would run one statement's prepared text for another.
const std::vector<const Statement*>& all_statements();
extern const Statement kAddReceiveCounts;
extern const Statement kReceiveCount;
extern const Statement kDeleteReceiveCountsBefore;
// Day roll-ups (schema 4).
extern const Statement kLoadDayAggregate;
extern const Statement kUpsertDayAggregate;
extern const Statement kLoadAggregatesByDay;
extern const Statement kAggregateBucketStarts;
extern const Statement kDaysToRollUp;
extern const Statement kLockDaysShared;
extern const Statement kLockDaysExclusive;
extern const Statement kDaysRolledUp;
extern const Statement kDeleteDayAggregates;

}  // namespace blur::collector::store::pg::sql

#endif  // BLUR_COLLECTOR_STORE_POSTGRES_POSTGRES_SQL_H
