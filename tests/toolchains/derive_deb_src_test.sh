#!/usr/bin/env bash
# toolchains/derive-deb-src.sh derives deb-src entries from the apt
# configuration it is given, and only from it: no address of its own, and a
# clear failure when nothing can be derived.
set -euo pipefail
script=${1:?usage: derive_deb_src_test.sh path/to/derive-deb-src.sh}
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$dir/a/sources.list.d"
cat > "$dir/a/sources.list.d/debian.sources" <<'SRC'
Types: deb
URIs: file:/srv/mirror-a/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: file:/srv/mirror-a/debian-security
Suites: bookworm-security
Components: main

Types: deb-src
URIs: file:/srv/mirror-b/debian
Suites: sid
Components: main
SRC
out=$("$script" "$dir/a")
grep -q '^Types: deb-src$' <<<"$out" || fail "no deb-src stanza: $out"
grep -q '^URIs: file:/srv/mirror-a/debian$' <<<"$out" || fail "main archive not mirrored: $out"
! grep -q security <<<"$out" || fail "security archive mirrored: $out"
! grep -q mirror-b <<<"$out" || fail "an existing deb-src stanza was copied: $out"

mkdir -p "$dir/b/sources.list.d"
printf 'deb [arch=amd64] file:/srv/mirror-a/debian bookworm main\n# deb file:/srv/x/debian y z\n' \
  > "$dir/b/sources.list"
out=$("$script" "$dir/b")
grep -qx 'deb-src \[arch=amd64\] file:/srv/mirror-a/debian bookworm main' <<<"$out" ||
  fail "one-line entry not derived: $out"

mkdir -p "$dir/c/sources.list.d"
if err=$("$script" "$dir/c" 2>&1); then fail "derived something from nothing: $err"; fi
grep -q 'Add a deb-src line' <<<"$err" || fail "no advice on failure: $err"

! grep -qE 'https?://' "$(dirname "$script")/setup.sh" || fail "setup.sh names an address"
! grep -vE '^\s*#' "$script" | grep -qE 'https?://' || fail "derive-deb-src.sh names an address"
echo "derive_deb_src_test: ok"
