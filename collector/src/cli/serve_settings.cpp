// The table of `serve`'s settings (serve_options.h): a knob is one entry,
// its key in the server file, its flag, help, range and field. Alone in
// this file so that the server file's fuzzer (tests/fuzz) reads the real
// table without linking the server.
#include "cli/serve_options.h"

namespace blur::collector {

std::vector<Setting> serve_settings(ServeOptions& o) {
  using F = Setting::Form;
  return {
      // The top level.
      Setting{"", "metrics_file", "--metrics-file,--config",
              "Register the metrics of a TOML file of [[metric]] tables (the server file may "
              "hold them itself); --config is its former name",
              &o.metrics_file}
          .existing_file(),
      // [server]
      Setting{"server", "address", "--address", "Address to listen on", &o.http.address},
      Setting{"server", "port", "--port", "Port to listen on (0: any free port)", &o.http.port}
          .range(0, 65535),
      Setting{"server", "threads", "--threads",
              "HTTP I/O threads (commits run on one writer thread of their own)", &o.http.threads}
          .range(1, 256),
      Setting{"server", "shutdown_timeout", "--shutdown-timeout",
              "On SIGINT/SIGTERM: seconds to finish the requests in progress before closing "
              "every connection",
              &o.shutdown_timeout_seconds}
          .range(0, 3600),
      Setting{"server", "reload_seconds", "--reload-seconds,--credentials-reload-seconds",
              "Look this often for what other collectors or the operator changed: the "
              "credentials file (revocations, tokens, keys), the client CRL, the store's metric "
              "definitions (SIGHUP: at once); a credentials file that cannot be used is logged "
              "and the last good one kept",
              &o.reload_seconds}
          .range(0.1, 3600),
      // [store]
      Setting{"store", "url", "--db",
              "Database: PATH or sqlite:PATH (embedded, created if missing), or postgresql://...",
              &o.db},
      Setting{"store", "max_report_age", "--max-report-age",
              "Reports observed (by the device's clock) longer than this before they arrive are "
              "bucketed at their receive time, so a device cannot claim the buckets of the whole "
              "retention: seconds, or a number with s, m, h or d (e.g. 3d, 72h); at least 1 "
              "minute",
              &o.store.max_report_age_seconds}
          .as(F::kDuration)
          .range(60, double{kMaxRetentionDays} * 86400),
      Setting{"store", "duplicate_window", "--duplicate-window",
              "PostgreSQL (raw reports in daily partitions): a report resent this long after it "
              "first arrived is still recognised as a duplicate (later, it may be stored twice); "
              "SQLite recognises one as long as the original is kept: seconds, or a number with "
              "s, m, h or d",
              &o.store.duplicate_window_seconds}
          .as(F::kDuration)
          .range(3600, double{kMaxRetentionDays} * 86400),
      // [auth]
      Setting{"auth", "directory", "--auth-dir",
              "Credentials directory (created at first start; default: DB.auth beside an SQLite "
              "store; required with PostgreSQL)",
              &o.auth_dir}
          .as(F::kPath),
      Setting{"auth", "disabled", "--no-auth",
              "No authentication at all: for local experiments only (warns every start)",
              &o.no_auth}
          .as(F::kFlag),
      Setting{"auth", "enrollments_per_address", "--enrollments-per-address",
              "POST /v1/enroll: new devices per source address (an IPv6 /64 counts as one) and "
              "hour; renewals of enrolled devices do not count. The default admits a fleet "
              "behind one NAT address",
              &o.enrollment.per_address_per_hour},
      Setting{"auth", "enrollments_per_secret", "--enrollments-per-secret",
              "POST /v1/enroll: new devices per enrollment secret and hour; its lower half is a "
              "reserve of which each source address gets at most 10 an hour, so that a few "
              "addresses cannot spend it for everyone",
              &o.enrollment.per_secret_per_hour},
      // [limits]
      Setting{"limits", "max_connections", "--max-connections",
              "Connections served at once; past it, 503 with Retry-After (lowered to fit ulimit "
              "-n)",
              &o.http.max_connections}
          .range(1, 1000000),
      Setting{"limits", "max_connections_per_address", "--max-connections-per-address",
              "Connections one source address (IPv6: one /64) may hold at once; past it, 503 "
              "with Retry-After (at most --max-connections; the default is far above what a "
              "fleet behind one NAT address needs)",
              &o.http.max_connections_per_address}
          .range(1, 1000000),
      Setting{"limits", "max_connections_per_device", "--max-connections-per-device",
              "Mutual TLS: connections one device certificate may hold at once; past it, 503 "
              "with Retry-After",
              &o.http.max_connections_per_device}
          .range(1, 1000000),
      Setting{"limits", "max_queued_reports", "--max-queued-reports",
              "Reports waiting for the database; past it, POST /v1/reports gets 503 with "
              "Retry-After",
              &o.max_queued_reports}
          .range(1, 100000000),
      // [tls]
      Setting{"tls", "cert", "--tls-cert", "Serve HTTPS with this PEM certificate",
              &o.http.tls_certificate_file}
          .existing_file(),
      Setting{"tls", "key", "--tls-key", "The certificate's PEM private key", &o.http.tls_key_file}
          .existing_file(),
      Setting{"tls", "client_ca", "--tls-client-ca",
              "Mutual TLS: ask HTTPS clients for a certificate and verify it against this PEM CA "
              "(the fleet's); clients without one are still let in",
              &o.http.tls_client_ca_file}
          .existing_file(),
      Setting{"tls", "client_crl", "--tls-client-crl",
              "With --tls-client-ca: PEM CRLs signed by that CA; a device certificate they list "
              "gets 401 on POST /v1/reports (re-read when the file changes)",
              &o.http.tls_client_crl_file}
          .existing_file(),
      // [log]
      Setting{"log", "file", "--log-file",
              "Append the request log (one JSON line per request) to this file instead of "
              "stderr",
              &o.observability.log_file}
          .as(F::kPath),
      Setting{"log", "requests", "--log-requests", "Write the request log (true/false)",
              &o.observability.log_requests},
      // [monitoring]
      Setting{"monitoring", "address", "--metrics-address",
              "Serve /metrics, /healthz and /readyz on this HOST:PORT (plain HTTP) instead of "
              "/metrics on the API's port",
              &o.observability.metrics_address},
      Setting{"monitoring", "ready_timeout", "--ready-timeout",
              "/readyz: seconds the database has to answer", &o.observability.ready_timeout_seconds}
          .range(0.01, 60),
      Setting{"monitoring", "token_file", "--monitoring-token-file",
              "/metrics, /healthz and /readyz answer only requests with Authorization: Bearer "
              "<the token in this file> (401 otherwise), on whichever port they are",
              &o.observability.token_file}
          .existing_file(),
      // [reads]
      Setting{"reads", "threads", "--read-threads",
              "Estimates and series run on this many threads of their own, never on the HTTP I/O "
              "threads",
              &o.reads.threads}
          .range(1, 256),
      Setting{"reads", "queue", "--read-queue",
              "Estimates and series waiting for a read thread; past it, 503 with Retry-After",
              &o.reads.max_queued}
          .range(0, 100000),
      Setting{"reads", "idle_class", "--read-idle-class",
              "Linux: the read threads run in the SCHED_IDLE scheduling class as well as at "
              "niceness 19, taking the CPU only when nothing else of the machine wants it; false: "
              "niceness 19 only",
              &o.reads.idle_class},
      Setting{"reads", "deadline", "--read-deadline",
              "Seconds an estimate or series may take, waiting included; past it, 503 (refusal "
              "\"deadline\") and the read is cancelled",
              &o.read_deadline_seconds}
          .range(0.01, 3600),
  };
}

}  // namespace blur::collector
