// The embedded backend: one SQLite file in WAL mode with synchronous=FULL,
// so a commit is durable when it returns and readers never wait for the
// writer (each has its own connection and snapshot). One process writes a
// file at a time; several collectors share a PostgreSQL instead.
#ifndef BLUR_COLLECTOR_STORE_SQLITE_SQLITE_BACKEND_H
#define BLUR_COLLECTOR_STORE_SQLITE_SQLITE_BACKEND_H

#include <memory>
#include <string>

#include "store/backend.h"

namespace blur::collector::store {

Outcome<std::unique_ptr<Database>> open_sqlite_database(const std::string& path);

}  // namespace blur::collector::store

#endif  // BLUR_COLLECTOR_STORE_SQLITE_SQLITE_BACKEND_H
