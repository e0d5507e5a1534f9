# Sourced by scripts/demo.sh and scripts/train-demo.sh: the set-up they need
# (toolchains/setup.sh --demo) and the programs they run, built with the
# `demo` preset (build/demo: no tests or examples; with ccache, so a later
# scripts/test-all.sh reuses the objects it shares). Skipped when a
# calling script already did it (BLUR_DEMO_BUILT).
#
#   build_demo_programs TARGET...
build_demo_programs() {
  [ -z "${BLUR_DEMO_BUILT:-}" ] || return 0
  toolchains/setup.sh --demo
  echo "demo: building $* (preset demo, build/demo)"
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=true
  cmake --preset demo -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    > build-demo-configure.log 2>&1 || { cat build-demo-configure.log; return 1; }
  rm -f build-demo-configure.log
  local target_args=() t
  for t in "$@"; do target_args+=(--target "$t"); done
  cmake --build --preset demo "${target_args[@]}" | tail -n 1
  export BLUR_DEMO_BUILT=1
}
