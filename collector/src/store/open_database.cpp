#include "store/backend.h"
#include "store/postgres/postgres_backend.h"
#include "store/sqlite/sqlite_backend.h"

namespace blur::collector::store {

namespace {
bool starts_with(const std::string& text, const char* prefix) {
  return text.rfind(prefix, 0) == 0;
}
}  // namespace

Outcome<std::unique_ptr<Database>> open_database(const std::string& url) {
  if (starts_with(url, "sqlite:")) return open_sqlite_database(url.substr(7));
  if (starts_with(url, "postgresql://") || starts_with(url, "postgres://")) {
    return open_postgres_database(url);
  }
  if (url.find("://") != std::string::npos) {
    return invalid("unknown database URL scheme in '" + url.substr(0, url.find("://")) +
                   "://...': use PATH, sqlite:PATH or postgresql://...");
  }
  return open_sqlite_database(url);
}

}  // namespace blur::collector::store
