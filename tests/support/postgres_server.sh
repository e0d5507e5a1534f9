#!/bin/sh
# A throw-away PostgreSQL server for tests, from Debian's binaries.
#
#   postgres_server.sh start DIR   # fresh cluster in DIR/data, socket in DIR,
#                                  # database "blur"; writes the URL to DIR/url
#   postgres_server.sh stop DIR
#
# The server runs as the unprivileged `postgres` user (initdb refuses root;
# the user is created if the system has none), listens on a Unix socket only
# (listen_addresses='': no TCP port can collide with another run), and keeps
# fsync and synchronous_commit on: the tests and benchmarks measure durable
# commits. If the server cannot start, this exits non-zero with the reason
# (the tail of the server's log), so the tests that need it fail, never skip.
set -eu

PG_BIN=${BLUR_PG_BIN:-/usr/lib/postgresql/15/bin}
PG_USER=postgres

die() {
  echo "postgres_server.sh: $*" >&2
  exit 1
}

[ $# -eq 2 ] || die "usage: postgres_server.sh start|stop DIR"
action=$1
dir=$2
case $dir in
  /*) ;;
  *) dir=$(pwd)/$dir ;;
esac

# As root, run the server's tools as $PG_USER; as anyone else, as ourselves
# (the directory is ours then).
as_pg() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

# A Unix socket path holds at most 107 bytes. A deep build tree gets a short
# socket directory under /tmp, recorded in DIR/socket_dir.
socket_dir_for() {
  if [ -f "$dir/socket_dir" ]; then
    cat "$dir/socket_dir"
  elif [ ${#dir} -le 80 ]; then
    echo "$dir"
  else
    s=$(mktemp -d /tmp/blur-pg.XXXXXX)
    echo "$s" >"$dir/socket_dir"
    echo "$s"
  fi
}

stop_server() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    # fast: roll back open sessions and shut down cleanly; immediate if that hangs.
    as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -t 30 -w stop >/dev/null 2>&1 ||
      as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}

log_tail() {
  if [ -f "$dir/server.log" ]; then
    echo "--- last lines of $dir/server.log:" >&2
    tail -n 20 "$dir/server.log" >&2
  fi
}

case $action in
  start)
    [ -x "$PG_BIN/initdb" ] ||
      die "no PostgreSQL server binaries in $PG_BIN (install Debian's 'postgresql' package: toolchains/setup.sh)"
    mkdir -p "$dir"
    # A server left running by an interrupted run: stop it, start afresh.
    stop_server
    rm -rf "$dir/data" "$dir/url" "$dir/server.log" "$dir/initdb.log"
    if [ "$(id -u)" = 0 ]; then
      if ! id "$PG_USER" >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER" ||
          die "cannot create the '$PG_USER' user"
      fi
      chown "$PG_USER" "$dir"
      # Every parent must be searchable by that user (a 0700 temp directory is not).
      runuser -u "$PG_USER" -- test -w "$dir" ||
        die "user '$PG_USER' cannot write $dir: each parent directory must be searchable (o+x)"
    fi
    sock=$(socket_dir_for)
    mkdir -p "$sock"
    [ "$(id -u)" = 0 ] && chown "$PG_USER" "$sock"

    # --no-sync: initdb's own flush of the new cluster (tens of MB) is for
    # surviving a crash of this machine, which a test cluster need not; it
    # took tens of seconds beside fsync-heavy tests. The server's fsync stays on.
    if ! as_pg "$PG_BIN/initdb" -D "$dir/data" -A trust -U "$PG_USER" -E UTF8 --no-locale --no-sync \
      >"$dir/initdb.log" 2>&1; then
      tail -n 20 "$dir/initdb.log" >&2
      die "initdb failed"
    fi
    # Tuned for tests on a small machine, still durable: fsync and
    # synchronous_commit stay on. Group commit needs no setting: sessions
    # that commit while a WAL flush runs are flushed together by the next
    # one; a commit_delay of 50 us (waiting for more to join) measured slower
    # with two committing collectors on 2 cores, so it stays 0. A large
    # max_wal_size keeps checkpoints out of the measurements.
    cat >>"$dir/data/postgresql.conf" <<EOF

# --- tests/support/postgres_server.sh
listen_addresses = ''
unix_socket_directories = '$sock'
shared_buffers = 128MB
max_connections = 50
fsync = on
synchronous_commit = on
full_page_writes = on
wal_buffers = 16MB
commit_delay = 0
max_wal_size = 4GB
checkpoint_timeout = 30min
logging_collector = off
log_min_messages = warning
EOF
    if ! as_pg "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -t 60 -w start >/dev/null 2>&1; then
      log_tail
      die "the server did not start"
    fi
    if ! as_pg "$PG_BIN/createdb" -h "$sock" -U "$PG_USER" blur >"$dir/createdb.log" 2>&1; then
      cat "$dir/createdb.log" >&2
      log_tail
      die "createdb failed"
    fi
    url="postgresql:///blur?host=$sock&user=$PG_USER"
    echo "$url" >"$dir/url"
    echo "$url"
    ;;
  stop)
    stop_server
    rm -f "$dir/url"
    if [ -f "$dir/socket_dir" ]; then
      rm -rf "$(cat "$dir/socket_dir")" "$dir/socket_dir"
    fi
    ;;
  *)
    die "usage: postgres_server.sh start|stop DIR"
    ;;
esac
