#!/usr/bin/env bash
# Builds blur-collector's container image with podman, from scratch: the
# collector binary (stripped), exactly the shared libraries ldd says it
# loads, and /etc/passwd, /etc/group and /etc/nsswitch.conf naming its user
# (uid 65532, "blur"). No registry, no base image.
#
#   deploy/container/build-image.sh BLUR_COLLECTOR [TAG]
#     TAG: default localhost/blur-collector:latest
#
# Needs podman (Debian's podman and runc); builds with --isolation=chroot,
# so it runs where podman cannot create namespaces for a build too.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
collector=${1:?usage: build-image.sh BLUR_COLLECTOR [TAG]}
tag=${2:-localhost/blur-collector:latest}
uid=65532

[ -x "$collector" ] || { echo "build-image.sh: $collector is not an executable" >&2; exit 1; }
command -v podman > /dev/null ||
  { echo "build-image.sh: podman not found (Debian's podman; toolchains/setup.sh)" >&2; exit 1; }

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
rootfs=$context/rootfs
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc" "$rootfs/tmp" "$context/state/blur-collector"
chmod 1777 "$rootfs/tmp"
chmod 0700 "$context/state/blur-collector"
strip -o "$rootfs/usr/local/bin/blur-collector" "$collector"

# Every library the dynamic loader resolves for the binary, and the loader
# itself, at the paths it looks for them (cp -L: the file, not the link).
libraries=$(ldd "$collector" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
[ -n "$libraries" ] || { echo "build-image.sh: ldd found no libraries for $collector" >&2; exit 1; }
if ldd "$collector" | grep -q 'not found'; then
  echo "build-image.sh: libraries missing on this machine:" >&2
  ldd "$collector" | grep 'not found' >&2
  exit 1
fi
for library in $libraries; do
  mkdir -p "$rootfs$(dirname "$library")"
  cp -L "$library" "$rootfs$library"
done

cat > "$rootfs/etc/passwd" <<PASSWD
root:x:0:0:root:/nonexistent:/sbin/nologin
blur:x:$uid:$uid:blur-collector:/var/lib/blur-collector:/sbin/nologin
PASSWD
cat > "$rootfs/etc/group" <<GROUP
root:x:0:
blur:x:$uid:
GROUP
# A PostgreSQL host name is resolved from /etc/hosts, then DNS (podman
# writes both files at run time); glibc 2.34 and later has both in libc.
echo 'hosts: files dns' > "$rootfs/etc/nsswitch.conf"

cp "$here/Containerfile" "$context/Containerfile"
podman build --isolation=chroot --tag "$tag" --file "$context/Containerfile" "$context"
echo "build-image.sh: built $tag ($(echo "$libraries" | wc -w) shared libraries)"
