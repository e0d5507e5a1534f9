#!/usr/bin/env bash
# deploy/systemd/blur-collector.service, checked by systemd's own tools:
# `systemd-analyze verify` (in a root holding the unit, the collector binary
# at its ExecStart path and the system's units; any warning fails, since
# verify exits 0 on a directive it could not parse), and
# `systemd-analyze security --offline=yes`, whose exposure score must stay at
# or under the one docs/deploy.md records.
set -euo pipefail
collector=$1
source_dir=$2
unit=$source_dir/deploy/systemd/blur-collector.service
docs=$source_dir/docs/deploy.md

command -v systemd-analyze > /dev/null ||
  { echo "FAIL: systemd-analyze not found (Debian's systemd package; toolchains/setup.sh)" >&2; exit 1; }
[ -d /usr/lib/systemd/system ] ||
  { echo "FAIL: /usr/lib/systemd/system missing: systemd-analyze verify needs the system's units" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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
