#!/bin/bash
# Blur as a package, used from outside its tree:
#   package_test.sh installed BLUR_BUILD_DIR [TOOLCHAIN_FILE]
#       cmake --install into a temporary prefix, then tests/package/consumer
#       configured with find_package(blur) (and the toolchain file), built,
#       and run (under the toolchain's emulator when cross); on the host also
#       every installed header compiled alone and listed in headers.md.
#   package_test.sh pkg-config BLUR_BUILD_DIR
#       install, then a C program built with `cc $(pkg-config --cflags --libs blur)`.
#   package_test.sh add_subdirectory BLUR_SOURCE_DIR DEPS_DIR [TOOLCHAIN_FILE]
#       tests/package/parent: a project that add_subdirectory()s Blur's tree.
set -euo pipefail
mode=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

configure_and_run() {  # SOURCE_DIR [cmake args...]: configure, build, run its test
  local source=$1; shift
  cmake -S "$source" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=MinSizeRel "$@" > "$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; echo "package test: configuring $source failed"; exit 1; }
  grep -E "^-- (blur|checking)" "$work/configure.log" || true
  cmake --build "$work/build" -j 2 > "$work/build.log" 2>&1 ||
    { tail -n 40 "$work/build.log"; echo "package test: building $source failed"; exit 1; }
  ctest --test-dir "$work/build" --output-on-failure -V | grep -E "consumer:|FAILED|tests passed|Failed"
  ctest --test-dir "$work/build" > /dev/null || { echo "package test: the consumer failed"; exit 1; }
}

install_into() {  # BUILD_DIR PREFIX
  cmake --install "$1" --prefix "$2" > "$work/install.log" ||
    { cat "$work/install.log"; echo "package test: cmake --install failed"; exit 1; }
  echo "installed $(find "$2" -type f | wc -l) files into the prefix"
}

case $mode in
  installed)
    build=$2 toolchain=${3:-}
    install_into "$build" "$work/prefix"
    args=(-DCMAKE_PREFIX_PATH="$work/prefix")
    if [ -n "$toolchain" ]; then
      args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")
    else
      args+=(-DCHECK_HEADERS=ON)
      # Every installed header has its line in the headers' index.
      index="$work/prefix/share/doc/blur/headers.md"
      missing=0
      while read -r header; do
        name=$(basename "$header")
        grep -q "\`[^\`]*$name\`" "$index" || { echo "not in headers.md: $header"; missing=1; }
      done < <(cd "$work/prefix/include" && find blur -name '*.h' -not -path 'blur/third_party/*' \
                 -not -path 'blur/ports/*' -not -path 'blur/proto/*')
      [ $missing -eq 0 ] || exit 1
    fi
    configure_and_run "$here/consumer" "${args[@]}"
    ;;
  pkg-config)
    build=$2
    install_into "$build" "$work/prefix"
    export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
    echo "pkg-config: blur $(pkg-config --modversion blur)"
    # shellcheck disable=SC2046  # the flags are words
    cc -std=c11 -Wall -Wextra -Werror -pedantic "$here/pkgconfig_app.c" \
      $(pkg-config --cflags --libs blur) -o "$work/app"
    "$work/app"
    ;;
  add_subdirectory)
    source=$2 deps=$3 toolchain=${4:-}
    args=(-DBLUR_SOURCE="$source" -DBLUR_DEPS_DIR="$deps")
    [ -z "$toolchain" ] || args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")
    configure_and_run "$here/parent" "${args[@]}"
    # The parent's build has Blur's libraries and nothing of its top-level build.
    for absent in blur-collector blur-trainer blur-device-sim blur-c-app collector_tests; do
      if find "$work/build" -name "$absent" -type f | grep -q .; then
        echo "package test: add_subdirectory built $absent"; exit 1
      fi
    done
    ;;
  *) echo "usage: $0 installed|pkg-config|add_subdirectory ..." >&2; exit 2 ;;
esac
echo "package test ($mode): passed"
