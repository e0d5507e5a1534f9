// A private schema on the test PostgreSQL server (tests/support/
// postgres_server.sh, ctest fixture `postgres`): every test gets its own
// schema and a URL whose search_path points there, so tests that share the
// server run in parallel without seeing each other's tables.
//
// The server's URL is read from the file named by BLUR_TEST_POSTGRES_URL_FILE.
// Anything missing is an error with the reason, for the test to FAIL with:
// a test that needs PostgreSQL never skips.
#ifndef BLUR_TESTS_POSTGRES_TEST_DB_H
#define BLUR_TESTS_POSTGRES_TEST_DB_H

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>

namespace blur_test {

class PostgresTestSchema {
 public:
  // Connects to the fixture's server and creates a fresh schema; on failure
  // ok() is false and error() says why.
  PostgresTestSchema() {
    const char* file = std::getenv("BLUR_TEST_POSTGRES_URL_FILE");
    if (file == nullptr || *file == '\0') {
      error_ = "BLUR_TEST_POSTGRES_URL_FILE is not set: run this test with ctest, whose "
               "`postgres` fixture starts a server (tests/support/postgres_server.sh)";
      return;
    }
    std::ifstream in(file);
    if (!std::getline(in, server_url_) || server_url_.empty()) {
      error_ = std::string("no PostgreSQL URL in ") + file +
               ": the postgres fixture (tests/support/postgres_server.sh start) did not run "
               "or failed; see its output";
      return;
    }
    admin_ = PQconnectdb(server_url_.c_str());
    if (PQstatus(admin_) != CONNECTION_OK) {
      error_ = "cannot reach the test PostgreSQL server (" + server_url_ +
               "): " + PQerrorMessage(admin_);
      return;
    }
    // NOTICEs ("drop cascades to ...") would clutter the test output.
    PQsetNoticeProcessor(admin_, [](void*, const char*) {}, nullptr);
    static std::atomic<int> counter{0};
    schema_ = "blur_test_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
    if (!exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE; CREATE SCHEMA " + schema_)) return;
    url_ = server_url_ + (server_url_.find('?') == std::string::npos ? "?" : "&") +
           "options=-csearch_path%3D" + schema_;
  }
  ~PostgresTestSchema() {
    if (!schema_.empty() && PQstatus(admin_) == CONNECTION_OK) {
      exec("DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
    }
    PQfinish(admin_);
  }
  PostgresTestSchema(const PostgresTestSchema&) = delete;
  PostgresTestSchema& operator=(const PostgresTestSchema&) = delete;

  bool ok() const { return !url_.empty(); }
  const std::string& error() const { return error_; }
  // The server with search_path = this schema.
  const std::string& url() const { return url_; }
  const std::string& server_url() const { return server_url_; }
  const std::string& schema() const { return schema_; }

  // Runs SQL on the admin connection (search_path not set: qualify names
  // with schema()). False and error() on failure.
  bool exec(const std::string& sql) {
    PGresult* result = PQexec(admin_, sql.c_str());
    const ExecStatusType status = PQresultStatus(result);
    const bool good = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (!good) error_ = sql + ": " + PQerrorMessage(admin_);
    PQclear(result);
    return good;
  }

  // The first column of the first row as text ("" and error() on failure).
  std::string query(const std::string& sql) {
    PGresult* result = PQexec(admin_, sql.c_str());
    std::string value;
    if (PQresultStatus(result) == PGRES_TUPLES_OK && PQntuples(result) > 0) {
      value = PQgetvalue(result, 0, 0);
    } else {
      error_ = sql + ": " + PQerrorMessage(admin_);
    }
    PQclear(result);
    return value;
  }

 private:
  std::string server_url_;
  std::string url_;
  std::string schema_;
  std::string error_;
  PGconn* admin_ = nullptr;
};

}  // namespace blur_test

#endif  // BLUR_TESTS_POSTGRES_TEST_DB_H
