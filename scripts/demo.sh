#!/usr/bin/env bash
# The demo: a collector on loopback with a fresh SQLite database, a fleet of
# simulated devices running the real SDK, and the estimate next to the truth.
# Does its own set-up (Debian packages, sources, host build).
#
#   scripts/demo.sh [--devices N] [--true-rate R] [--epsilon E] [--seed S] [--https]
#                   [--skip-model]
#
# Then, unless --skip-model, the language-model demo (scripts/train-demo.sh):
# a DP-SGD next-word model trained on Debian's fortunes in a few minutes.
#
# --seed: repeat a run's devices exactly (default: a fresh seed, printed).
# --https: the collector serves HTTPS with a certificate made for the demo
# (a throw-away CA, scripts/lib/tls.sh) and the devices verify it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

devices=20000 rate=0.3 epsilon=1 seed="" https=0 model=1
while [ $# -gt 0 ]; do
  case $1 in
    --devices) devices=$2; shift 2 ;;
    --true-rate) rate=$2; shift 2 ;;
    --epsilon) epsilon=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --https) https=1; shift ;;
    --skip-model) model=0; shift ;;
    *) echo "usage: $0 [--devices N] [--true-rate R] [--epsilon E] [--seed S] [--https] [--skip-model]" >&2
       exit 2 ;;
  esac
done

toolchains/setup.sh
echo "demo: building (host preset)"
cmake --preset host > build-host-configure.log 2>&1 || { cat build-host-configure.log; exit 1; }
rm -f build-host-configure.log
cmake --build --preset host --target blur-collector blur-device-sim | tail -n 1

work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. scripts/lib/collector.sh
tls=() client_tls=() scheme=http host=127.0.0.1
if [ "$https" = 1 ]; then
  . scripts/lib/tls.sh
  make_test_certificates "$work"
  tls=(--tls-cert "$work/server.pem" --tls-key "$work/server.key")
  client_tls=(--ca "$work/ca.pem")
  scheme=https host=localhost
fi
start_collector build/host/collector/blur-collector "$work/server.log" \
  --db "$work/blur.db" --metric "1:rr:$epsilon" "${tls[@]}"
port=$collector_port
echo "demo: collector on $scheme://$host:$port, temporary database $work/blur.db"
echo "demo: authentication on: credentials in $collector_auth_dir; each device enrolls with the"
echo "      app's enrollment secret for a token bound to its nonce; the estimate is read with the"
echo "      reader token (both passed to the simulator in the environment, never on the command line)"

build/host/examples/fleet-sim/blur-device-sim fleet --collector "$scheme://$host:$port" \
  "${client_tls[@]}" \
  --devices "$devices" --true-rate "$rate" --epsilon "$epsilon" --metric 1 \
  ${seed:+--seed "$seed"} --threads 16 --table

if [ "$model" = 1 ]; then
  kill "$collector_pid" 2>/dev/null || true
  echo
  scripts/train-demo.sh
fi
