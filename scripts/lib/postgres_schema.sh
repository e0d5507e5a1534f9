# Sourced by tests on the ctest fixture `postgres`: a schema of their own in
# the fixture's server, a work directory, and a cleanup at exit that stops
# the processes in $pids, drops the schema and removes the directory.
#
#   postgres_test_schema NAME
#   -> $server (the fixture's URL), $psql, $schema (NAME_PID), $db (the URL
#      with search_path set to the schema), $work, pids=()
#
# Fails with a message when the fixture left no URL (its server did not start).
postgres_test_schema() {
  local url_file=${BLUR_TEST_POSTGRES_URL_FILE:?run with ctest (fixture postgres)}
  [ -s "$url_file" ] || { echo "no PostgreSQL URL in $url_file: the postgres fixture failed" >&2; exit 1; }
  server=$(cat "$url_file")
  psql=/usr/lib/postgresql/15/bin/psql
  [ -x "$psql" ] || psql=psql
  schema=${1}_$$
  db="$server&options=-csearch_path%3D$schema"
  work=$(mktemp -d)
  pids=()
  trap postgres_test_cleanup EXIT
  "$psql" "$server" -qc "CREATE SCHEMA $schema"
}

postgres_test_cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$psql" "$server" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
