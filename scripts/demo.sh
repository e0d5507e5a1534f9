#!/usr/bin/env bash
# The demo: a collector on loopback with a fresh SQLite database, a fleet of
# simulated devices running the real SDK, and the estimate next to the truth.
# Does its own set-up (Debian packages, sources, host build).
#
#   scripts/demo.sh [--devices N] [--true-rate R] [--epsilon E] [--seed S] [--https]
#                   [--skip-model]
#
# Then the keyboard loop: 50,000 more devices report a word each from the
# fortunes corpus with word discovery (pem, epsilon 4); the collector finds
# the most frequent words. Unless --skip-model, the language-model demo
# (scripts/train-demo.sh) trains a DP-SGD next-word model on Debian's
# fortunes with those words as its vocabulary, exports the int8 device
# model, and a simulated keyboard running the SDK suggests words with it.
#
# --seed: repeat a run's devices exactly (default: a fresh seed, printed);
# the word-discovery devices use the next seed (distinct device nonces).
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
  --db "$work/blur.db" --metric "1:rr:$epsilon" --metric 2:pem:4:12 "${tls[@]}"
port=$collector_port
echo "demo: collector on $scheme://$host:$port, temporary database $work/blur.db"
echo "demo: authentication on: credentials in $collector_auth_dir; each device enrolls with the"
echo "      app's enrollment secret for a token bound to its nonce; the estimate is read with the"
echo "      reader token (both passed to the simulator in the environment, never on the command line)"

build/host/collector/tools/device-sim/blur-device-sim fleet --collector "$scheme://$host:$port" \
  "${client_tls[@]}" \
  --devices "$devices" --true-rate "$rate" --epsilon "$epsilon" --metric 1 \
  ${seed:+--seed "$seed"} --threads 16 --table

echo
echo "demo: word discovery: 50000 devices each report one word of the fortunes corpus (pem, epsilon 4)"
python3 tests/bench/discovery/corpus_words.py --max-length 12 --out "$work/all-words.txt" \
  --truth "$work/word-truth.tsv" ${seed:+--seed "$seed"}
head -n 50000 "$work/all-words.txt" > "$work/words.txt"
build/host/collector/tools/device-sim/blur-device-sim discover --collector "$scheme://$host:$port" \
  "${client_tls[@]}" --metric 2 --epsilon 4 --max-length 12 --values "$work/words.txt" \
  --top-k 20 ${seed:+--seed "$((seed + 1))"} --threads 32 > "$work/discovered.json" \
  2> "$work/discover.log" ||
  { cat "$work/discover.log"; exit 1; }
python3 - "$work/discovered.json" "$work/words.txt" <<'PY'
import collections, json, sys
d = json.load(open(sys.argv[1]))
truth = collections.Counter(w.strip() for w in open(sys.argv[2]) if w.strip())
top = {w for w, _ in truth.most_common(20)}
print(f"\n  the collector's top 20 words of {d['n']} randomized reports (truth: the devices' words)")
print(f"  {'word':<10}{'estimate':>10}{'95% interval':>20}{'true':>8}")
for w in d["words"]:
    low, high = w["ci95"]
    print(f"  {w['word']:<10}{w['estimate']:>10.0f}   [{low:>7.0f}, {high:>7.0f}]{truth[w['word']]:>8}")
found = len({w['word'] for w in d['words']} & top)
print(f"  {found} of the true top 20 found; no word list was given to the collector")
PY

if [ "$model" = 1 ]; then
  kill "$collector_pid" 2>/dev/null || true
  echo
  build/host/collector/blur-collector discovered-words --db "$work/blur.db" --metric 2 \
    --out "$work/words-2.txt"
  scripts/train-demo.sh --discovered-words "$work/words-2.txt"
fi
