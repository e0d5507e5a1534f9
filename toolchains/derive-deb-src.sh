#!/usr/bin/env bash
# Prints deb-src entries derived only from the machine's own apt
# configuration: every enabled `deb` source of a Debian main archive (a
# deb822 stanza or a one-line entry; security archives left out, the source
# packages Blur needs live in the main one) gets a `deb-src` twin. The
# project names no archive address of its own.
#
#   toolchains/derive-deb-src.sh [APT_DIR]   (default /etc/apt)
#
# Output: deb822 stanzas, then one-line entries under a "# one-line" marker.
# Exit status 1, with the reason on stderr, when nothing could be derived.
set -euo pipefail
apt_dir=${1:-/etc/apt}
stanzas=""
for src in "$apt_dir"/sources.list.d/*.sources; do
  [ -f "$src" ] || continue
  stanza=$(awk 'BEGIN{RS="";ORS="\n\n"}
       /(^|\n)Types:([^\n]*[ \t])?deb([ \t]|\n|$)/ && /(^|\n)URIs:[^\n]*debian/ &&
       !/(^|\n)URIs:[^\n]*security/ && !/(^|\n)Enabled: *no/ {
         sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$src")
  [ -z "$stanza" ] || stanzas+="$stanza"$'\n\n'
done
lines=""
for list in "$apt_dir"/sources.list "$apt_dir"/sources.list.d/*.list; do
  [ -f "$list" ] || continue
  line=$(sed -nE '/^deb[[:space:]]/{/security/d;/debian/{s/^deb([[:space:]])/deb-src\1/;p}}' "$list")
  [ -z "$line" ] || lines+="$line"$'\n'
done
if [ -z "$stanzas" ] && [ -z "$lines" ]; then
  echo "cannot derive a deb-src entry from $apt_dir/sources.list{,.d}: no enabled 'deb'" >&2
  echo "entry for a Debian archive was found. Add a deb-src line for your Debian mirror" >&2
  echo "(the same URI and suite as your deb line), then run this again." >&2
  exit 1
fi
[ -z "$stanzas" ] || printf '%s' "$stanzas"
[ -z "$lines" ] || printf '# one-line\n%s' "$lines"
