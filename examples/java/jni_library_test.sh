#!/bin/sh
# A cross build's libblur_jni, where no JVM of the target runs (armhf,
# aarch64, s390x): the ELF header names the target's class, byte order,
# machine and ABI (each HEADER_PATTERN must match `readelf -h`), the library
# exports exactly the entry points Native.java declares plus JNI_OnLoad and
# JNI_OnUnload (a native method without its C function fails at its first
# call in the JVM; an extra export leaks the SDK's symbols into the app), and
# it needs nothing beyond libc, libm and the C++ runtime.
#   jni_library_test.sh READELF LIBRARY NATIVE_JAVA HEADER_PATTERN...
set -eu
readelf=$1 library=$2 native_java=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$readelf" -h "$library" > "$work/header"
for pattern in "$@"; do
  grep -qE "$pattern" "$work/header" ||
    { echo "FAIL: the ELF header does not match '$pattern':" >&2; cat "$work/header" >&2; exit 1; }
done

sed -n 's/^ *static native [^(]* \([A-Za-z0-9_]*\)(.*/Java_org_blur_Native_\1/p' "$native_java" |
  sort > "$work/declared"
[ -s "$work/declared" ] || { echo "FAIL: no native method found in $native_java" >&2; exit 1; }
printf 'JNI_OnLoad\nJNI_OnUnload\n' >> "$work/declared"
sort -o "$work/declared" "$work/declared"
"$readelf" --dyn-syms -W "$library" |
  awk '($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" { print $8 }' | sed 's/@.*//' | sort -u > "$work/exported"
if ! cmp -s "$work/declared" "$work/exported"; then
  echo "FAIL: exported symbols differ from Native.java's methods (< declared only, > exported only):" >&2
  diff "$work/declared" "$work/exported" >&2 || true
  exit 1
fi

"$readelf" -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' > "$work/needed"
if grep -vE '^(libc\.so|libm\.so|libgcc_s\.so|libstdc\+\+\.so|ld-linux)' "$work/needed"; then
  echo "FAIL: libblur_jni needs the libraries above" >&2
  exit 1
fi
echo "libblur_jni: $(wc -l < "$work/exported") entry points, $(tr '\n' ' ' < "$work/needed")"
echo "$(grep -E 'Class|Data|Machine|Flags' "$work/header" | tr -s ' ' | tr '\n' ';')"
