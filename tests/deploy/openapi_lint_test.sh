#!/usr/bin/env bash
# collector/api/openapi.yaml validated by a real OpenAPI 3.1 validator:
# Redocly's CLI, pinned and installed by toolchains/setup.sh into
# BLUR_DEPS_DIR/redocly with the machine's npm, under the strict recommended
# rules (collector/api/redocly.yaml: every warning an error). First the
# validator must refuse a broken copy (a $ref to nothing), so a validator
# that accepts anything cannot pass this test.
set -euo pipefail
deps_dir=$1
spec=$2
config=$(dirname "$spec")/redocly.yaml
redocly=$deps_dir/redocly/node_modules/.bin/redocly
if [ ! -x "$redocly" ] || ! command -v node > /dev/null; then
  echo "FAIL: Redocly's CLI not found at $redocly (or node missing):" \
       "toolchains/setup.sh installs it with npm" >&2
  exit 1
fi
# No telemetry, no update check: the lint reads only the files named.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "redocly $("$redocly" --version 2>/dev/null | head -n1)"

sed 's|#/components/schemas/Enrollment"|#/components/schemas/NoSuchSchema"|' "$spec" > "$work/broken.yaml"
cp "$config" "$work/redocly.yaml"
if "$redocly" lint --config "$work/redocly.yaml" "$work/broken.yaml" > "$work/broken.log" 2>&1; then
  echo "FAIL: redocly lint accepted a spec with a \$ref to nothing:" >&2
  cat "$work/broken.log" >&2
  exit 1
fi
grep -q 'NoSuchSchema' "$work/broken.log" ||
  { echo "FAIL: redocly lint refused the broken copy without naming the bad \$ref:" >&2;
    cat "$work/broken.log" >&2; exit 1; }

if ! "$redocly" lint --config "$config" "$spec" > "$work/lint.log" 2>&1; then
  echo "FAIL: redocly lint refuses $spec:" >&2
  cat "$work/lint.log" >&2
  exit 1
fi
grep -E 'valid|warning' "$work/lint.log" || true
