#include "store/postgres/pg_session.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace blur::collector::store::pg {
namespace {

// NOTICEs (e.g. "relation already exists, skipping") would go to stderr.
void ignore_notice(void*, const char*) {}

std::string trimmed(const char* text) {
  std::string s = text != nullptr ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

void ResultDeleter::operator()(pg_result* result) const { PQclear(result); }

Params& Params::int64(int64_t value) {
  std::string bytes;
  put_int64(bytes, value);
  values_.push_back(std::move(bytes));
  return *this;
}

Params& Params::text(const std::string& value) {
  values_.push_back(value);
  return *this;
}

Params& Params::array(const ArrayWriter& value) {
  values_.push_back(value.bytes());
  return *this;
}

int rows(const pg_result* result) { return PQntuples(result); }
bool field_null(const pg_result* result, int row, int column) {
  return PQgetisnull(result, row, column) != 0;
}

// Each reader checks the width the server sent: a schema changed under us
// reads as zeros rather than past the end of the field.
int64_t field_int64(const pg_result* result, int row, int column) {
  if (PQgetlength(result, row, column) != 8) return 0;
  return get_int64(PQgetvalue(result, row, column));
}

// float8 travels as its IEEE 754 bits, big-endian, like an int8.
double field_float8(const pg_result* result, int row, int column) {
  const int64_t bits = field_int64(result, row, column);
  double value = 0;
  static_assert(sizeof value == sizeof bits, "float8 is 8 bytes");
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

int16_t field_int16(const pg_result* result, int row, int column) {
  if (PQgetlength(result, row, column) != 2) return 0;
  return get_int16(PQgetvalue(result, row, column));
}

std::string field_bytes(const pg_result* result, int row, int column) {
  return std::string(PQgetvalue(result, row, column),
                     static_cast<size_t>(PQgetlength(result, row, column)));
}

uint64_t affected_rows(const pg_result* result) {
  // PQcmdTuples takes a non-const result in libpq's C API, but only reads it.
  const char* count = PQcmdTuples(const_cast<pg_result*>(result));
  return count != nullptr && *count != '\0' ? std::strtoull(count, nullptr, 10) : 0;
}

Session::Session(pg_conn* conn, std::string where, std::string secret)
    : conn_(conn), where_(std::move(where)), secret_(std::move(secret)) {
  PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
}

Session::~Session() { PQfinish(conn_); }

Outcome<std::unique_ptr<Session>> Session::open(const std::string& conninfo, std::string where,
                                                std::string secret) {
  // expand_dbname: "dbname" holds the whole URI; a fallback application
  // name makes the collector's sessions recognizable in pg_stat_activity
  // unless the URI names one.
  const char* const keywords[] = {"dbname", "fallback_application_name", nullptr};
  const char* const values[] = {conninfo.c_str(), "blur-collector", nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  if (conn == nullptr) return unavailable("cannot connect to " + where + ": out of memory");
  std::unique_ptr<Session> session(new Session(conn, std::move(where), std::move(secret)));
  if (PQstatus(conn) != CONNECTION_OK) {
    return session->unavailable_error("cannot connect to " + session->where_);
  }
  return session;
}

std::string Session::scrub(std::string message) const {
  if (secret_.empty()) return message;
  for (size_t at = message.find(secret_); at != std::string::npos;
       at = message.find(secret_, at)) {
    message.replace(at, secret_.size(), "***");
    at += 3;
  }
  return message;
}

Error Session::unavailable_error(const std::string& what) const {
  return unavailable(scrub(what + ": " + trimmed(PQerrorMessage(conn_))));
}

bool Session::broken() const { return PQstatus(conn_) != CONNECTION_OK; }

bool Session::transaction_failed() const { return PQtransactionStatus(conn_) == PQTRANS_INERROR; }

Fallible Session::reconnect() {
  PQreset(conn_);
  for (bool& prepared : prepared_) prepared = false;
  if (PQstatus(conn_) != CONNECTION_OK) return unavailable_error("cannot reconnect to " + where_);
  return done();
}

Outcome<Result> Session::check(pg_result* raw, const char* what) {
  Result result(raw);
  const ExecStatusType status =
      result != nullptr ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  std::string message = "PostgreSQL at " + where_ + ": " + what + ": ";
  if (result != nullptr && PQresultErrorField(result.get(), PG_DIAG_MESSAGE_PRIMARY) != nullptr) {
    message += trimmed(PQresultErrorField(result.get(), PG_DIAG_MESSAGE_PRIMARY));
    const char* state = PQresultErrorField(result.get(), PG_DIAG_SQLSTATE);
    if (state != nullptr) message += std::string(" (SQLSTATE ") + state + ")";
  } else {
    message += trimmed(PQerrorMessage(conn_));  // lost connection, out of memory
  }
  if (broken()) message += " [connection lost]";
  return unavailable(scrub(std::move(message)));
}

Outcome<Result> Session::exec(const char* sql) { return check(PQexec(conn_, sql), sql); }

namespace {

struct Raw {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  explicit Raw(const Params& params) {
    for (const std::string& value : params.values()) {
      values.push_back(value.data());
      lengths.push_back(static_cast<int>(value.size()));
      formats.push_back(1);
    }
  }
};

}  // namespace

Outcome<Result> Session::run(const Statement& statement, const Params& params) {
  const std::string name = "blur_" + std::to_string(statement.id);
  if (!prepared_[statement.id]) {
    auto prepared = check(PQprepare(conn_, name.c_str(), statement.sql,
                                    static_cast<int>(statement.types.size()),
                                    statement.types.data()),
                          statement.name);
    if (!prepared) return prepared.error();
    prepared_[statement.id] = true;
  }
  const Raw raw(params);
  return check(PQexecPrepared(conn_, name.c_str(), static_cast<int>(params.size()),
                              raw.values.data(), raw.lengths.data(), raw.formats.data(), 1),
               statement.name);
}

Outcome<Result> Session::run_once(const char* name, const std::string& sql,
                                  const Params& params) {
  const Raw raw(params);
  return check(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                            raw.values.data(), raw.lengths.data(), raw.formats.data(), 1),
               name);
}

}  // namespace blur::collector::store::pg
