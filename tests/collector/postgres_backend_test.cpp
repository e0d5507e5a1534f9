// What only the PostgreSQL backend has to get right: credentials kept out
// of messages, several collectors creating the schema and inserting the same
// keys at once, a connection lost mid-session, and a transaction that failed
// on the server. The shared semantics are in backend_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backend_test_support.h"
#include "postgres_test_db.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql.h"

namespace {

using namespace blur::collector;
using namespace blur::collector::store;
using blur_test::PostgresTestSchema;
using blur_test::report;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PostgresBackend, DescribeAndConnectionErrorsNeverShowThePassword) {
  auto database =
      open_postgres_database("postgresql://blur:s3cr3t-pw@127.0.0.1:1/blurdb?connect_timeout=5");
  ASSERT_TRUE(database) << database.error().message;
  EXPECT_EQ(database.value()->describe(), "postgresql://blur@127.0.0.1:1/blurdb");
  auto connection = database.value()->connect();
  ASSERT_FALSE(connection);
  EXPECT_EQ(connection.error().kind, Error::Kind::kUnavailable);
  EXPECT_TRUE(contains(connection.error().message, "127.0.0.1")) << connection.error().message;
  EXPECT_FALSE(contains(connection.error().message, "s3cr3t")) << connection.error().message;

  auto socket = open_postgres_database(
      "postgres:///blurdb?host=/nonexistent/blur-socket&user=u&password=qq-secret-qq");
  ASSERT_TRUE(socket) << socket.error().message;
  EXPECT_EQ(socket.value()->describe(), "postgresql://u@/blurdb?host=/nonexistent/blur-socket");
  auto refused = socket.value()->connect();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, Error::Kind::kUnavailable);
  EXPECT_TRUE(contains(refused.error().message, "/nonexistent/blur-socket"))
      << refused.error().message;
  EXPECT_FALSE(contains(refused.error().message, "qq-secret-qq")) << refused.error().message;
}

TEST(PostgresBackend, AMalformedUrlIsInvalidWithoutThePassword) {
  auto database = open_postgres_database("postgresql://u:pw-secret@host/db?no_such_option=1");
  ASSERT_FALSE(database);
  EXPECT_EQ(database.error().kind, Error::Kind::kInvalid);
  EXPECT_TRUE(contains(database.error().message, "no_such_option")) << database.error().message;
  EXPECT_FALSE(contains(database.error().message, "pw-secret")) << database.error().message;
}

// A session prepares each statement once under its id: ids must be
// distinct and within the session's table.
TEST(PostgresBackend, StatementIdsAreDistinct) {
  std::set<int> ids;
  for (const blur::collector::store::pg::Statement* statement :
       blur::collector::store::pg::sql::all_statements()) {
    EXPECT_GE(statement->id, 0) << statement->name;
    EXPECT_LT(statement->id, blur::collector::store::pg::kMaxStatements) << statement->name;
    EXPECT_TRUE(ids.insert(statement->id).second) << statement->name << " reuses id " << statement->id;
  }
}

TEST(OpenDatabase, DispatchesOnTheSchemeAndNeverEchoesCredentials) {
  auto postgres = open_database("postgres://reader:pw-9@db.example:6543/telemetry");
  ASSERT_TRUE(postgres) << postgres.error().message;
  EXPECT_EQ(postgres.value()->describe(), "postgresql://reader@db.example:6543/telemetry");
  auto postgresql = open_database("postgresql://db.example/telemetry");
  ASSERT_TRUE(postgresql) << postgresql.error().message;
  EXPECT_EQ(postgresql.value()->describe(), "postgresql://db.example/telemetry");

  auto unknown = open_database("mysql://root:pw-9@db.example/telemetry");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, Error::Kind::kInvalid);
  EXPECT_TRUE(contains(unknown.error().message, "postgresql://")) << unknown.error().message;
  EXPECT_FALSE(contains(unknown.error().message, "pw-9")) << unknown.error().message;
}

class PostgresServerTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(schema_.ok()) << schema_.error(); }
  // A database on this test's schema; `extra` is appended to the URL.
  std::unique_ptr<Database> open(const std::string& extra = "") {
    auto database = open_postgres_database(schema_.url() + extra);
    EXPECT_TRUE(database) << database.error().message;
    return database ? std::move(database.value()) : nullptr;
  }
  std::unique_ptr<Connection> connect(Database& database) {
    auto connection = database.connect();
    EXPECT_TRUE(connection) << connection.error().message;
    return connection ? std::move(connection.value()) : nullptr;
  }
  PostgresTestSchema schema_;
};

// Collectors started together on an empty database: each creates or finds
// the schema, none fails, the version row exists once.
TEST_F(PostgresServerTest, ConcurrentSchemaCreationOnAnEmptyDatabase) {
  auto database = open();
  ASSERT_TRUE(database);
  constexpr int kCollectors = 8;
  std::vector<std::unique_ptr<Connection>> connections;
  for (int i = 0; i < kCollectors; ++i) {
    connections.push_back(connect(*database));
    ASSERT_TRUE(connections.back());
  }
  std::vector<std::string> errors(kCollectors);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCollectors; ++i) {
    threads.emplace_back([&, i] {
      auto created = connections[i]->ensure_schema();
      if (!created) errors[i] = created.error().message;
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& error : errors) EXPECT_EQ(error, "");
  EXPECT_EQ(schema_.query("SELECT count(*) FROM " + schema_.schema() + ".blur_schema"), "1");
  EXPECT_EQ(schema_.query("SELECT version FROM " + schema_.schema() + ".blur_schema"),
            std::to_string(kSchemaVersion));
}

// Two collectors receive the same retried batches: every key is stored
// once, and exactly one of them reports it inserted.
TEST_F(PostgresServerTest, ConcurrentOverlappingInsertsStoreEachKeyOnce) {
  auto database = open();
  ASSERT_TRUE(database);
  auto a = connect(*database), b = connect(*database);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->ensure_schema());
  constexpr uint64_t kKeys = 20000;
  std::atomic<uint64_t> inserted{0};
  std::vector<std::string> errors(2);
  auto run = [&](Connection& c, int who) {
    // Both walk all keys in batches of 500, in opposite directions, with
    // the batch's rows shuffled differently.
    for (uint64_t batch = 0; batch < kKeys / 500; ++batch) {
      const uint64_t first = (who == 0 ? batch : kKeys / 500 - 1 - batch) * 500;
      std::vector<ReportRow> rows;
      for (uint64_t i = 0; i < 500; ++i) {
        const uint64_t k = first + (who == 0 ? i : (i * 7) % 500);
        rows.push_back(report(0x9000000000000000ull ^ k, k % 3, 1, 0, "p"));
      }
      auto began = c.begin();
      auto result = began ? c.insert_reports(rows) : Outcome<std::vector<bool>>(began.error());
      auto committed = result ? c.commit() : Fallible(result.error());
      if (!committed) {
        c.rollback();
        errors[who] = committed.error().message;
        return;
      }
      for (bool stored : result.value()) inserted += stored ? 1 : 0;
    }
  };
  std::thread ta([&] { run(*a, 0); }), tb([&] { run(*b, 1); });
  ta.join();
  tb.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(inserted.load(), kKeys);
  EXPECT_EQ(VALUE(a->count_reports(std::nullopt)), kKeys);
}

// The server ends the session (a restart, a failover, an administrator):
// the call fails as kUnavailable, and the next one outside a transaction
// reconnects; inside a transaction every call fails until the rollback.
TEST_F(PostgresServerTest, ALostConnectionIsUnavailableThenReconnectsOutsideTransactions) {
  const std::string name = "victim_" + schema_.schema();
  auto database = open("&application_name=" + name);
  ASSERT_TRUE(database);
  auto connection = connect(*database);
  ASSERT_TRUE(connection);
  ASSERT_TRUE(connection->ensure_schema());
  auto* pg = dynamic_cast<PostgresConnection*>(connection.get());
  ASSERT_NE(pg, nullptr);
  ASSERT_TRUE(connection->insert_reports({report(1, 1, 1, 0, "kept")}));
  const std::string kill =
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '" +
      name + "'";

  ASSERT_EQ(schema_.query(kill), "1") << schema_.error();
  auto lost = connection->count_reports(std::nullopt);
  ASSERT_FALSE(lost);
  EXPECT_EQ(lost.error().kind, Error::Kind::kUnavailable);
  EXPECT_TRUE(pg->broken());
  EXPECT_EQ(VALUE(connection->count_reports(std::nullopt)), 1u);  // reconnected
  EXPECT_FALSE(pg->broken());

  ASSERT_TRUE(connection->begin());
  ASSERT_TRUE(connection->insert_reports({report(1, 2, 1, 0, "lost with the session")}));
  ASSERT_EQ(schema_.query(kill), "1") << schema_.error();
  auto failed = connection->insert_reports({report(1, 3, 1, 0, "x")});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().kind, Error::Kind::kUnavailable);
  auto refused = connection->count_reports(std::nullopt);
  ASSERT_FALSE(refused);
  EXPECT_TRUE(contains(refused.error().message, "roll back")) << refused.error().message;
  EXPECT_FALSE(connection->commit());
  connection->rollback();
  EXPECT_EQ(VALUE(connection->count_reports(std::nullopt)), 1u);
}

// A statement that fails inside a transaction: the server aborts it, and
// commit() must say so rather than report the silent ROLLBACK as success.
TEST_F(PostgresServerTest, CommitOfAFailedTransactionIsAnError) {
  auto database = open();
  ASSERT_TRUE(database);
  auto c = connect(*database);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->ensure_schema());
  ASSERT_TRUE(c->begin());
  ASSERT_TRUE(c->insert_reports({report(1, 1, 1, 0, "r")}));
  auto bad = c->insert_metric(1, std::string("\xff\xfe not UTF-8", 13));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().kind, Error::Kind::kUnavailable);
  auto committed = c->commit();
  ASSERT_FALSE(committed);
  c->rollback();
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 0u);
  EXPECT_TRUE(VALUE(c->load_metrics()).empty());
}

}  // namespace
