#!/usr/bin/env bash
# blur-device-sim discover end to end: 91,510 simulated devices (each a
# blur::Client) record words drawn from a Zipf(1.1) law over Debian's
# wamerican words (the word-discovery benchmark's population at n = 10^5,
# tests/bench/discovery/zipf_words.py), and the collector's decoder finds
# them. Checks the output contract and a top-10 F1 floor of 0.8 (measured
# 0.9-1.0 over seeds 1-3; fixed seed, so the run is deterministic); the
# same with sfp, whose fragments need more devices: at this size it finds
# 4-6 words, all of the true top 10 (seeds 1-3), so the floor is 4 words
# and precision 1; and that a file with a non-word fails naming its line,
# before any device runs.
#
#   discover_cli_test.sh BLUR_DEVICE_SIM ZIPF_WORDS_PY
set -euo pipefail
device_sim=$1
zipf_words=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

[ -r /usr/share/dict/american-english ] || {
  echo "FAIL: /usr/share/dict/american-english missing (Debian package wamerican; toolchains/setup.sh installs it)"
  exit 1
}
/usr/bin/python3 "$zipf_words" --devices 100000 --out "$work/words.txt" --truth "$work/truth.tsv"

"$device_sim" discover --mechanism pem --epsilon 4 --values "$work/words.txt" --top-k 10 \
  --seed 1 --offline > "$work/out.json"

/usr/bin/python3 - "$work/out.json" "$work/truth.tsv" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
truth = [line.split("\t")[0] for line in open(sys.argv[2])]
counts = {line.split("\t")[0]: int(line.split("\t")[1]) for line in open(sys.argv[2])}
assert out["n"] == 91510, out["n"]
assert out["epsilon_charged"] == 4.0, out["epsilon_charged"]
words = out["words"]
assert 8 <= len(words) <= 10, len(words)  # only words 4.5 standard errors above zero
estimates = [w["estimate"] for w in words]
assert estimates == sorted(estimates, reverse=True), "not in decreasing estimate order"
for w in words:
    assert set(w) >= {"word", "estimate", "stderr", "ci95"}, w
    low, high = w["ci95"]
    assert low < w["estimate"] < high and w["stderr"] > 0, w
found = {w["word"] for w in words}
hits = len(found & set(truth[:10]))
precision, recall = hits / len(words), hits / 10
f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
print(f"top-10 F1 {f1:.2f}; the heaviest: {words[0]['word']} {words[0]['estimate']:.0f} "
      f"+- {words[0]['stderr']:.0f} (truth {counts[truth[0]]})")
assert f1 >= 0.8, f"top-10 F1 {f1} below the 0.8 floor: {sorted(found)} vs {truth[:10]}"
# The heaviest word is the true heaviest, within 4.5 standard errors.
assert words[0]["word"] == truth[0], words[0]
assert abs(words[0]["estimate"] - counts[truth[0]]) < 4.5 * words[0]["stderr"], words[0]
PY

"$device_sim" discover --mechanism sfp --epsilon 4 --values "$work/words.txt" --top-k 10 \
  --seed 1 --offline > "$work/sfp.json"
/usr/bin/python3 - "$work/sfp.json" "$work/truth.tsv" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
truth = [line.split("\t")[0] for line in open(sys.argv[2])]
counts = {line.split("\t")[0]: int(line.split("\t")[1]) for line in open(sys.argv[2])}
assert out["mechanism"] == "sfp" and out["n"] == 91510, out
assert out["epsilon_charged"] == 4.0, out["epsilon_charged"]
words = out["words"]
estimates = [w["estimate"] for w in words]
assert estimates == sorted(estimates, reverse=True), "not in decreasing estimate order"
found = [w["word"] for w in words]
print(f"sfp: {len(words)} words, all in the true top 10: {found}")
assert 4 <= len(words) <= 10, found
assert set(found) <= set(truth[:10]), f"{found} vs {truth[:10]}"
assert words[0]["word"] == truth[0], words[0]
for w in words:
    low, high = w["ci95"]
    assert low < w["estimate"] < high and w["stderr"] > 0, w
    assert abs(w["estimate"] - counts[w["word"]]) < 4.5 * w["stderr"], w
PY

# A non-word refuses the whole file, naming the line.
printf 'hello\nHello\n' > "$work/bad.txt"
if "$device_sim" discover --mechanism pem --epsilon 4 --values "$work/bad.txt" --seed 1 \
    --offline 2> "$work/err.txt"; then
  echo "FAIL: a file with a non-word was accepted"
  exit 1
fi
grep -q "bad.txt:2: not a word" "$work/err.txt" || { cat "$work/err.txt"; exit 1; }
echo "discover CLI test: passed"
