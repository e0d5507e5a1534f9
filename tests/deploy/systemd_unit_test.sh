#!/usr/bin/env bash
# deploy/systemd/blur-collector.service, checked by systemd's own tools:
# `systemd-analyze verify` (in a root holding the unit, the collector binary
# at its ExecStart path and the system's units; any warning fails, since
# verify exits 0 on a directive it could not parse), and
# `systemd-analyze security --offline=yes`, whose exposure score must stay at
# or under the one docs/deploy.md records. And the unit's system call
# filter against the calls the collector makes: serve traced by strace
# while a fleet enrolls and reports, a reader reads, an admin works, a
# scrape and probes come, and SIGTERM stops it; every call must be one the
# unit's SystemCallFilter= lines allow (their groups expanded by
# `systemd-analyze syscall-filter`), or the service would be killed (or
# refused, with EPERM) under systemd.
set -euo pipefail
collector=$1
source_dir=$2
device_sim=$3
unit=$source_dir/deploy/systemd/blur-collector.service
docs=$source_dir/docs/deploy.md

command -v systemd-analyze > /dev/null ||
  { echo "FAIL: systemd-analyze not found (Debian's systemd package; toolchains/setup.sh)" >&2; exit 1; }
[ -d /usr/lib/systemd/system ] ||
  { echo "FAIL: /usr/lib/systemd/system missing: systemd-analyze verify needs the system's units" >&2; exit 1; }

work=$(mktemp -d)
collector_pid=
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/usr/local/bin" "$root/etc/systemd/system" "$root/etc/blur-collector" \
  "$root/usr/lib/systemd"
cp -r /usr/lib/systemd/system "$root/usr/lib/systemd/"
exec_path=$(sed -n 's|^ExecStart=\([^ ]*\).*|\1|p' "$unit")
[ "$exec_path" = /usr/local/bin/blur-collector ] ||
  { echo "FAIL: ExecStart runs '$exec_path', docs/deploy.md installs /usr/local/bin/blur-collector" >&2; exit 1; }
ln "$collector" "$root$exec_path" 2>/dev/null || cp "$collector" "$root$exec_path"
cp "$unit" "$root/etc/systemd/system/"
cp "$source_dir/deploy/systemd/blur-collector.env" "$source_dir/deploy/systemd/metrics.toml" \
  "$root/etc/blur-collector/"

if ! systemd-analyze verify --root="$root" blur-collector.service > "$work/verify.log" 2>&1 ||
   [ -s "$work/verify.log" ]; then
  echo "FAIL: systemd-analyze verify:" >&2
  cat "$work/verify.log" >&2
  exit 1
fi
echo "systemd-analyze verify: no errors, no warnings"

# The metrics file the unit registers is one serve starts with.
"$collector" serve --db "$work/check.db" --no-auth --config "$source_dir/deploy/systemd/metrics.toml" \
  --address 127.0.0.1 --port 0 > "$work/serve.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  grep -q 'listening on' "$work/serve.log" && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.1
done
kill $pid 2>/dev/null || true
wait $pid || true
grep -q 'listening on' "$work/serve.log" ||
  { echo "FAIL: serve does not start with deploy/systemd/metrics.toml:" >&2; cat "$work/serve.log" >&2; exit 1; }

systemd-analyze security --offline=yes "$unit" > "$work/security.log" 2>&1 || true
score=$(sed -n 's/.*Overall exposure level for blur-collector.service: \([0-9.]*\).*/\1/p' "$work/security.log")
recorded=$(sed -n 's/.*exposure level for blur-collector.service: \*\*\([0-9.]*\)\*\*.*/\1/p' "$docs" | head -n1)
[ -n "$score" ] || { echo "FAIL: no exposure score from systemd-analyze security:" >&2; cat "$work/security.log" >&2; exit 1; }
[ -n "$recorded" ] || { echo "FAIL: docs/deploy.md records no exposure score" >&2; exit 1; }
grep '✗' "$work/security.log" || true
echo "exposure score $score (recorded in docs/deploy.md: $recorded)"
/usr/bin/python3 -c "import sys; sys.exit(0 if float('$score') <= float('$recorded') else 1)" ||
  { echo "FAIL: exposure score $score is above the recorded $recorded" >&2; exit 1; }

# The system calls the collector makes, under the unit's filter.
command -v strace > /dev/null ||
  { echo "FAIL: strace not found (Debian's strace; toolchains/setup.sh)" >&2; exit 1; }
strace -f -qq -o /dev/null /bin/true 2> "$work/strace.log" ||
  { echo "FAIL: strace cannot trace here:" >&2; cat "$work/strace.log" >&2; exit 1; }
# As the service runs: an unprivileged user (as root, SQLite would call
# fchown), no capabilities; strace runs as that user too, tracing its child.
# (Run by an unprivileged user, the test traces as that user.)
mkdir -p "$work/state"
drop=()
if [ "$(id -u)" -eq 0 ]; then
  uid=65532
  chmod 0711 "$work"
  chown "$uid:$uid" "$work/state"
  drop=(setpriv --reuid=$uid --regid=$uid --clear-groups --inh-caps=-all --bounding-set=-all)
fi
cat > "$work/traced-collector" <<TRACED
#!/bin/sh
exec ${drop[*]} strace -f -qq -o "$work/state/trace.txt" "$collector" "\$@"
TRACED
chmod +x "$work/traced-collector"
. "$source_dir/scripts/lib/collector.sh"
start_collector "$work/traced-collector" "$work/traced.log" --db "$work/state/blur.db" \
  --config "$source_dir/deploy/systemd/metrics.toml" --metric 2:olh:1:16 \
  --metrics-address 127.0.0.1:0
base=http://127.0.0.1:$collector_port
"$device_sim" fleet --collector "$base" --devices 200 --metric 1 --epsilon 1 --seed 3 \
  --threads 4 > /dev/null 2>&1
"$device_sim" fleet --collector "$base" --mechanism olh --domain 16 --epsilon 1 --devices 100 \
  --metric 2 --seed 4 --threads 4 > /dev/null 2>&1
read_api "$base/v1/metrics/1/estimate" > /dev/null
read_api "$base/v1/metrics/2/series?bucket=hour" > /dev/null
admin=(-sf -H "Authorization: Bearer $BLUR_ADMIN_TOKEN")
curl "${admin[@]}" -X POST -H 'Content-Type: application/json' -d '{"role": "reader", "name": "r2"}' \
  "$base/v1/admin/tokens" > /dev/null
curl "${admin[@]}" -X POST "$base/v1/admin/prune" > /dev/null
curl -sf "$base/readyz" > /dev/null
curl -sf "$base/" > /dev/null
metrics_port=$(sed -n 's|.*metrics on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/traced.log")
curl -sf "http://127.0.0.1:$metrics_port/metrics" > /dev/null
# SIGTERM to the collector itself (strace's child), as systemd stops it.
server_pid=$(pgrep -P "$collector_pid")
kill -TERM "$server_pid"
wait "$collector_pid" || true
collector_pid=
grep -q 'stopped; stored 300 reports' "$work/traced.log" ||
  { echo "FAIL: the traced collector did not store the fleet's 300 reports:" >&2;
    cat "$work/traced.log" >&2; exit 1; }

# The unit's filter, as systemd reads it: the first line an allow list,
# then each line in order adds to it, or (~) takes from it; a group is
# expanded, nested groups included, from `systemd-analyze syscall-filter`.
systemd-analyze syscall-filter > "$work/groups" 2>/dev/null
sed -n 's/^SystemCallFilter=//p' "$unit" > "$work/filter"
/usr/bin/python3 - "$work/state/trace.txt" "$work/filter" "$work/groups" <<'PY'
import re, sys
used = set()
for line in open(sys.argv[1]):
    m = re.match(r"\d+ +(?:<\.\.\. )?([a-z_0-9]+)(?:\(| resumed>)", line)
    if m and m.group(1) not in ("exited", "killed"):
        used.add(m.group(1))
groups, group = {}, None
for line in open(sys.argv[3]):
    if line.startswith("@"):
        group = groups.setdefault(line.strip(), [])
    elif line.startswith("    ") and not line.strip().startswith("#") and group is not None:
        group.append(line.strip())
def expand(item):
    if not item.startswith("@"):
        return {item}
    if item not in groups:
        sys.exit(f"FAIL: systemd-analyze syscall-filter knows no group {item}")
    return set().union(*(expand(member) for member in groups[item]))
lines = [line.strip() for line in open(sys.argv[2]) if line.strip()]
if not lines or lines[0].startswith("~"):
    sys.exit("FAIL: the unit's first SystemCallFilter= line is not an allow list")
permitted = set()
for line in lines:
    names = set().union(*(expand(item) for item in line.lstrip("~").split()))
    permitted = permitted - names if line.startswith("~") else permitted | names
refused = sorted(used - permitted)
print(f"system calls: the collector made {len(used)} distinct ones; the unit permits "
      f"{len(permitted)}")
if refused:
    sys.exit("FAIL: the collector calls what blur-collector.service's SystemCallFilter= "
             "refuses: " + ", ".join(refused))
PY
