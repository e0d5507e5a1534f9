#include "store/postgres/postgres_backend.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <utility>

#include "store/postgres/pg_session.h"
#include "store/postgres/postgres_sql.h"

namespace blur::collector::store {
namespace {

using pg::Params;

// The password written in a URI, as written (userinfo "user:secret@" or a
// "password=" query parameter), to scrub it from libpq's messages about a
// URI it could not parse.
std::string written_password(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme != std::string::npos) {
    const size_t start = scheme + 3;
    const size_t end = url.find_first_of("/?", start);
    const std::string authority = url.substr(start, end == std::string::npos ? end : end - start);
    const size_t at = authority.rfind('@');
    const size_t colon = authority.find(':');
    if (at != std::string::npos && colon < at) return authority.substr(colon + 1, at - colon - 1);
  }
  const size_t query = url.find("password=");
  if (query != std::string::npos) {
    const size_t start = query + 9;
    return url.substr(start, url.find('&', start) - start);
  }
  return "";
}

std::string scrubbed(std::string message, const std::string& secret) {
  if (secret.empty()) return message;
  for (size_t at = message.find(secret); at != std::string::npos;
       at = message.find(secret, at + 3)) {
    message.replace(at, secret.size(), "***");
  }
  return message;
}

}  // namespace

PostgresDatabase::PostgresDatabase(std::string url, std::string description,
                                   std::string password)
    : url_(std::move(url)), description_(std::move(description)), password_(std::move(password)) {}

Outcome<std::unique_ptr<PostgresDatabase>> PostgresDatabase::open(const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string message = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return invalid("invalid PostgreSQL URL: " + scrubbed(message, written_password(url)));
  }
  std::string host, port, dbname, user, password;
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val == nullptr) continue;
    const std::string keyword = option->keyword;
    if (keyword == "host" || (keyword == "hostaddr" && host.empty())) host = option->val;
    if (keyword == "port") port = option->val;
    if (keyword == "dbname") dbname = option->val;
    if (keyword == "user") user = option->val;
    if (keyword == "password") password = option->val;
  }
  PQconninfoFree(options);

  std::string description = "postgresql://";
  if (!user.empty()) description += user + "@";
  const bool socket = !host.empty() && host.front() == '/';
  if (!socket) description += host + (port.empty() ? "" : ":" + port);
  description += "/" + dbname;
  if (socket) description += "?host=" + host + (port.empty() ? "" : "&port=" + port);
  return std::unique_ptr<PostgresDatabase>(
      new PostgresDatabase(url, std::move(description), std::move(password)));
}

Outcome<std::unique_ptr<Connection>> PostgresDatabase::connect() {
  auto session = pg::Session::open(url_, description_, password_);
  if (!session) return session.error();
  return std::unique_ptr<Connection>(new PostgresConnection(std::move(session.value())));
}

Outcome<std::unique_ptr<Database>> open_postgres_database(const std::string& url) {
  auto database = PostgresDatabase::open(url);
  if (!database) return database.error();
  return std::unique_ptr<Database>(std::move(database.value()));
}

PostgresConnection::PostgresConnection(std::unique_ptr<pg::Session> session)
    : session_(std::move(session)) {}

PostgresConnection::~PostgresConnection() = default;

bool PostgresConnection::broken() const { return session_->broken(); }

Fallible PostgresConnection::usable() {
  if (!session_->broken()) return done();
  if (in_transaction_) {
    return unavailable("the connection to the database was lost inside a transaction: "
                       "roll back and retry");
  }
  return session_->reconnect();
}

// ---- schema ----------------------------------------------------------------

Fallible PostgresConnection::ensure_schema() {
  if (auto ok = usable(); !ok) return ok;
  if (in_transaction_) return create_or_check_schema();  // the caller commits
  if (auto began = session_->exec("BEGIN"); !began) return began.error();
  if (auto checked = create_or_check_schema(); !checked) {
    (void)session_->exec("ROLLBACK");
    return checked;
  }
  if (auto committed = session_->exec("COMMIT"); !committed) return committed.error();
  return done();
}

// Version 3 -> 4: day_aggregates, empty (store/backend.h: kSchemaVersion).
Fallible PostgresConnection::upgrade_3_to_4_day_rollups() {
  auto upgraded = session_->exec(pg::sql::kUpgrade3To4DayRollups);
  if (!upgraded) return upgraded.error();
  return done();
}

Fallible PostgresConnection::create_or_check_schema() {
  if (auto locked = session_->exec(pg::sql::kSchemaLock); !locked) return locked.error();
  auto exists = session_->exec(pg::sql::kSchemaTableExists);
  if (!exists) return exists.error();
  if (pg::field_bytes(exists->get(), 0, 0) == "t") {
    auto version = session_->exec(pg::sql::kSelectSchemaVersion);
    if (!version) return version.error();
    if (!pg::field_null(version->get(), 0, 0)) {
      const long found = std::strtol(pg::field_bytes(version->get(), 0, 0).c_str(), nullptr, 10);
      const std::string versions = "database schema version " + std::to_string(found) + " is ";
      const std::string ours = " this collector's (" + std::to_string(kSchemaVersion) + ")";
      if (found > kSchemaVersion) {
        return invalid(versions + "newer than" + ours + ": upgrade the collector");
      }
      if (found < 1) return invalid(versions + "older than" + ours + " and cannot be upgraded");
      // One step after the other, in this transaction.
      if (found < 2) {
        auto upgraded = session_->exec(pg::sql::kUpgradeToVersion2);
        if (!upgraded) return upgraded.error();
      }
      if (found < 3) {
        auto upgraded = session_->exec(pg::sql::kUpgradeToVersion3);
        if (!upgraded) return upgraded.error();
        auto counted = session_->exec(pg::sql::kUpgradeToVersion3ReceiveCounts);
        if (!counted) return counted.error();
      }
      if (found < 4) {
        if (auto upgraded = upgrade_3_to_4_retired_metrics(); !upgraded) return upgraded;
        if (auto upgraded = upgrade_3_to_4_report_partitions(); !upgraded) return upgraded;
        if (auto upgraded = upgrade_3_to_4_day_rollups(); !upgraded) return upgraded;
      }
      if (found < 5) {
        auto upgraded = session_->exec(pg::sql::kUpgrade4To5PeriodFirstKeys);
        if (!upgraded) return upgraded.error();
      }
      return done();
    }
    // The table without its row: an earlier creation never committed that
    // far (it is one transaction), or someone emptied it. Create the rest.
  }
  if (auto created = session_->exec(pg::sql::kCreateSchema); !created) return created.error();
  return done();
}

// ---- transactions ----------------------------------------------------------

Fallible PostgresConnection::begin() {
  if (in_transaction_) return invalid("begin() inside a transaction");
  if (auto ok = usable(); !ok) return ok;
  if (auto began = session_->exec("BEGIN"); !began) return began.error();
  in_transaction_ = true;
  return done();
}

// synchronous_commit off for this transaction only (SET LOCAL): its COMMIT
// returns before the WAL is flushed; the WAL writer flushes it within
// wal_writer_delay. A crash may lose it, never tear it.
Fallible PostgresConnection::begin_lazy() {
  if (auto began = begin(); !began) return began;
  if (auto set = session_->exec("SET LOCAL synchronous_commit = off"); !set) {
    rollback();
    return set.error();
  }
  return done();
}

Fallible PostgresConnection::commit() {
  if (!in_transaction_) return invalid("commit() without begin()");
  if (auto ok = usable(); !ok) return ok;
  // A COMMIT of a transaction that failed earlier "succeeds" as a ROLLBACK.
  if (session_->transaction_failed()) {
    rollback();
    return unavailable("the transaction failed earlier and was rolled back");
  }
  // Whatever happens, the server ends the transaction here (a failed COMMIT
  // rolls back; a lost connection leaves it unknown, see the header).
  in_transaction_ = false;
  auto committed = session_->exec("COMMIT");
  if (!committed) return committed.error();
  if (std::string(PQcmdStatus(committed->get())) != "COMMIT") {
    return unavailable("the transaction was rolled back by the server");
  }
  return done();
}

void PostgresConnection::rollback() {
  if (in_transaction_ && !session_->broken()) (void)session_->exec("ROLLBACK");
  in_transaction_ = false;
  partition_days_.clear();  // a partition this transaction created is gone again
}

// ---- metrics and nodes -----------------------------------------------------

Outcome<std::vector<std::pair<uint32_t, std::string>>> PostgresConnection::load_metrics() {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kLoadMetrics, Params());
  if (!result) return result.error();
  std::vector<std::pair<uint32_t, std::string>> metrics;
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    metrics.emplace_back(static_cast<uint32_t>(pg::field_int64(result->get(), row, 0)),
                         pg::field_bytes(result->get(), row, 1));
  }
  return metrics;
}

Outcome<bool> PostgresConnection::insert_metric(uint32_t id, const std::string& config) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kInsertMetric, Params().int64(id).text(config));
  if (!result) return result.error();
  return pg::affected_rows(result->get()) == 1;
}

Outcome<int64_t> PostgresConnection::register_node(const std::string& description) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kRegisterNode, Params().text(description));
  if (!result) return result.error();
  return pg::field_int64(result->get(), 0, 0);
}

// ---- aggregates: postgres_aggregates.cpp ---------------------------------------

}  // namespace blur::collector::store
