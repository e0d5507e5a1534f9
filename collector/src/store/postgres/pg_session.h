// One libpq connection with what the backend needs around it: prepared
// statements with binary parameters and results, errors as Outcomes with
// libpq's message (never the password), and reconnection after a lost
// connection, but only between transactions.
#ifndef BLUR_COLLECTOR_STORE_POSTGRES_PG_SESSION_H
#define BLUR_COLLECTOR_STORE_POSTGRES_PG_SESSION_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/postgres/pg_wire.h"
#include "util/outcome.h"

struct pg_conn;
struct pg_result;

namespace blur::collector::store::pg {

struct ResultDeleter {
  void operator()(pg_result* result) const;
};
using Result = std::unique_ptr<pg_result, ResultDeleter>;

// A statement prepared once per session (lazily, at first use).
struct Statement {
  int id;            // index into the session's prepared flags: 0 .. kMaxStatements-1
  const char* name;  // for messages
  const char* sql;
  std::vector<unsigned> types;  // parameter type OIDs
};
inline constexpr int kMaxStatements = 64;

// Parameters of one statement, all in binary format.
class Params {
 public:
  Params& int64(int64_t value);
  Params& text(const std::string& value);  // text and bytea: the bytes themselves
  Params& array(const ArrayWriter& value);
  size_t size() const { return values_.size(); }
  const std::vector<std::string>& values() const { return values_; }

 private:
  std::vector<std::string> values_;
};

// Reading binary result fields.
int64_t field_int64(const pg_result* result, int row, int column);
double field_float8(const pg_result* result, int row, int column);
int16_t field_int16(const pg_result* result, int row, int column);
std::string field_bytes(const pg_result* result, int row, int column);
bool field_null(const pg_result* result, int row, int column);
int rows(const pg_result* result);
// PQcmdTuples as a number: the rows an INSERT/UPDATE/DELETE touched.
uint64_t affected_rows(const pg_result* result);

class Session {
 public:
  // conninfo goes to libpq unchanged; `where` names the server in messages
  // (no credentials); `secret` (the password, if any) is scrubbed from them.
  static Outcome<std::unique_ptr<Session>> open(const std::string& conninfo, std::string where,
                                                std::string secret);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // A command without parameters (BEGIN, COMMIT, DDL), text results.
  Outcome<Result> exec(const char* sql);
  // A prepared statement, binary parameters and results.
  Outcome<Result> run(const Statement& statement, const Params& params);
  // An unnamed statement (parsed each time), binary parameters and results:
  // for cursors and FETCH. `name` is for messages.
  Outcome<Result> run_once(const char* name, const std::string& sql, const Params& params);

  // The connection was lost; every call fails until reconnect().
  bool broken() const;
  // Opens the connection again (prepared statements are gone with it).
  Fallible reconnect();
  // The server-side transaction state is "failed" (an error inside BEGIN).
  bool transaction_failed() const;

  Error unavailable_error(const std::string& what) const;

 private:
  Session(pg_conn* conn, std::string where, std::string secret);
  Outcome<Result> check(pg_result* result, const char* what);
  std::string scrub(std::string message) const;

  pg_conn* conn_;
  std::string where_;
  std::string secret_;
  bool prepared_[kMaxStatements] = {};
};

}  // namespace blur::collector::store::pg

#endif  // BLUR_COLLECTOR_STORE_POSTGRES_PG_SESSION_H
