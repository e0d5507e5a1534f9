#!/usr/bin/env bash
# The demo: a collector on loopback with a fresh SQLite database, a fleet of
# simulated devices running the real SDK, and the estimate next to the truth.
# Does its own set-up (Debian packages, sources, host build).
#
#   scripts/demo.sh [--devices N] [--true-rate R] [--epsilon E] [--seed S] [--https]
#                   [--skip-model]   (WORD_DEVICES=N: the new-word fleet's size)
#
# Then the keyboard loop, as a keyboard team would run it:
# 1. the public model: a next-word model pretrained without privacy on
#    Debian's public text (scripts/lib/public_model.sh: once, then cached
#    under .deps), the model every keyboard ships with, and its dictionary;
# 2. new words: 120,000 more devices, each a user who typed 128 entries of
#    Debian's fortunes (the private text), report the word they typed most
#    that their keyboard's dictionary lacks (pem, epsilon 6, once each;
#    "no new word" is a report too); the collector discovers the heavy ones
#    with 95% intervals, next to the truth;
# 3. unless --skip-model, scripts/train-demo.sh adds those words to the
#    public model and fine-tunes it with DP-SGD on the fortunes (epsilon 8),
#    evaluates it beside the public model and the unigram baseline, and a
#    simulated keyboard running the SDK's int8 predictor suggests words.
# It ends with what each step cost in privacy.
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

started=$(date +%s)
. scripts/lib/demo_build.sh
build_demo_programs blur-collector blur-device-sim blur-trainer
trainer=build/demo/collector/trainer/blur-trainer
device_sim=build/demo/collector/tools/device-sim/blur-device-sim
word_epsilon=6 word_devices=${WORD_DEVICES:-120000} typed=128 finetune_epsilon=8

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
start_collector build/demo/collector/blur-collector "$work/server.log" \
  --db "$work/blur.db" --metric "1:rr:$epsilon" --metric "2:pem:$word_epsilon:12" "${tls[@]}"
port=$collector_port
echo "demo: collector on $scheme://$host:$port, temporary database $work/blur.db"
echo "demo: authentication on: credentials in $collector_auth_dir; each device enrolls with the"
echo "      app's enrollment secret for a token bound to its nonce; the estimate is read with the"
echo "      reader token (both passed to the simulator in the environment, never on the command line)"

"$device_sim" fleet --collector "$scheme://$host:$port" \
  "${client_tls[@]}" \
  --devices "$devices" --true-rate "$rate" --epsilon "$epsilon" --metric 1 \
  ${seed:+--seed "$seed"} --threads 16 --table

echo
. scripts/lib/public_model.sh
ensure_public_model "$trainer"

echo
echo "demo: new words: $word_devices devices, each a user who typed $typed entries of the fortunes,"
echo "      report the word they typed most that the public model's dictionary lacks"
echo "      (pem, epsilon $word_epsilon, one report each; \"no new word\" is a report too)"
python3 tests/bench/discovery/new_words.py --dictionary "$public_dictionary" \
  --devices "$word_devices" --typed "$typed" --max-length 12 ${seed:+--seed "$seed"} \
  --out "$work/words.txt" --truth "$work/word-truth.tsv"
fleet_started=$(date +%s)
"$device_sim" discover --collector "$scheme://$host:$port" \
  "${client_tls[@]}" --metric 2 --epsilon "$word_epsilon" --max-length 12 \
  --values "$work/words.txt" --top-k 64 ${seed:+--seed "$((seed + 1))"} --threads 32 \
  > "$work/discovered.json" 2> >(tee "$work/discover.log" >&2) || exit 1
fleet_seconds=$(( $(date +%s) - fleet_started ))
python3 - "$work/discovered.json" "$work/word-truth.tsv" "$public_dictionary" "$fleet_seconds" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
truth = {}
for line in open(sys.argv[2]):
    word, count = line.rstrip("\n").split("\t")
    truth[word] = int(count)
known = {line.rstrip("\n") for line in open(sys.argv[3])}
top = [w for w in truth if w != "'"][:20]
words = [w for w in d["words"] if w["word"] != "'"]
print(f"\n  {d['n']} reports in {sys.argv[4]} s; the collector's new words, heaviest first (no word list given)")
print(f"  {'word':<14}{'estimate':>9}{'95% interval':>20}{'true':>8}   new to the dictionary?")
for w in words[:24]:
    low, high = w["ci95"]
    new = "new" if w["word"] not in known else "known"
    print(f"  {w['word']:<14}{w['estimate']:>9.0f}   [{low:>7.0f}, {high:>7.0f}]{truth.get(w['word'], 0):>8}   {new}")
if len(words) > 24:
    print(f"  ... and {len(words) - 24} more")
found = {w["word"] for w in words}
missed = [w for w in top if w not in found]
print(f"  {len(top) - len(missed)} of the true top 20 new words found"
      + (f" (missed: {', '.join(missed)})" if missed else "")
      + f"; {len(words)} words in all, each at least 4.5 standard errors above zero")
PY
if [ "$model" = 1 ]; then
  kill "$collector_pid" 2>/dev/null || true
  echo
  build/demo/collector/blur-collector discovered-words --db "$work/blur.db" --metric 2 --top-k 64 \
    --out "$work/words-2.txt"
  scripts/train-demo.sh --discovered-words "$work/words-2.txt" --epsilon "$finetune_epsilon" \
    --out "$work/model"
fi

echo
echo "demo: what was spent, and where"
echo "  each of the $devices devices: epsilon $epsilon for its one rate report (randomized response)"
echo "  each of the $word_devices word devices: epsilon $word_epsilon for its one new-word report (pem);"
echo "    both charged on the device, in its persisted budget, before the report existed"
if [ "$model" = 1 ]; then
  python3 - "$work/model/train.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["privacy"]
print(f"  the fortunes' authors: epsilon {p['epsilon']:.2f} at delta {p['delta']:g} for the DP-SGD"
      f" fine-tuning (RDP accountant; PLD {p['epsilon_pld']:.2f}), per fortune, the unit of privacy")
PY
  echo "  the public model and its dictionary: nothing (Debian's public text, no user's)"
fi
echo "demo: done in $(( $(date +%s) - started )) s"
