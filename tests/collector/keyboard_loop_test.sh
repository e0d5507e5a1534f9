#!/usr/bin/env bash
# The keyboard loop through the real programs: 20,000 simulated devices
# (each a blur::Client) report words of the fortunes corpus with pem to a
# collector; `blur-collector discovered-words` writes the words it
# discovered to a file, from which `blur-trainer train --discovered-words`
# builds the model's vocabulary (no central epsilon) and trains with
# DP-SGD; `blur-trainer export-model` writes the int8 device model and its
# vocabulary; a simulated keyboard (blur-device-sim suggest, the SDK's
# predictor) suggests words from it.
#
#   keyboard_loop_test.sh BLUR_COLLECTOR BLUR_DEVICE_SIM BLUR_TRAINER CORPUS_WORDS_PY
set -euo pipefail
collector=$1
device_sim=$2
trainer=$3
corpus_words=$4
work=$(mktemp -d)
trap 'kill $collector_pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/../../scripts/lib/collector.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

/usr/bin/python3 "$corpus_words" --max-length 12 --out "$work/all.txt" --truth "$work/truth.tsv"
head -n 20000 "$work/all.txt" > "$work/words.txt"
start_collector "$collector" "$work/server.log" --db "$work/blur.db" --metric 2:pem:4:12
"$device_sim" discover --collector "http://127.0.0.1:$collector_port" --metric 2 --epsilon 4 \
  --max-length 12 --values "$work/words.txt" --top-k 20 --seed 5 --threads 32 \
  > "$work/discovered.json" 2> "$work/discover.log" || { cat "$work/discover.log"; fail "discover"; }
kill "$collector_pid"
wait "$collector_pid" 2>/dev/null || true
/usr/bin/python3 - "$work/discovered.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["n"] == 20000 and d["mechanism"] == "pem", d
words = [w["word"] for w in d["words"]]
# At this n only the heaviest words stand 4.5 standard errors above zero:
# "the" (about 1,000 of the 20,000 devices), and most of a, to, of, and.
assert words[0] == "the" and len(words) >= 5, words
assert len({"a", "to", "of", "and"} & set(words)) >= 3, words
PY

# The 20 words a 24-token vocabulary has room for (its 4 special tokens beside).
"$collector" discovered-words --db "$work/blur.db" --metric 2 --top-k 20 --out "$work/words-2.txt" \
  2> "$work/words.log" || { cat "$work/words.log"; fail "discovered-words"; }
head -n 2 "$work/words-2.txt" | grep -qx '#blur-discovered-words v1' || fail "the words file's header"
"$trainer" train --corpus fortunes --discovered-words "$work/words-2.txt" \
  --vocab-size 24 --embedding 16 --hidden 24 --epochs 0.2 --batch 64 --epsilon 8 --seed 7 \
  --progress-every 100000 --out "$work/model.blm" > "$work/train.json" 2> "$work/train.log" ||
  { cat "$work/train.log"; fail "train"; }
/usr/bin/python3 - "$work/train.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["vocabulary"]
assert v["source"].startswith("word-discovery metric 2 (pem, epsilon 4 per report over 20000"), v
# The discovered words (those at least 4.5 standard errors above zero) and
# the 4 special tokens.
assert v["central_epsilon"] == 0 and 9 <= v["size"] <= 24, v
assert d["privacy"]["epsilon"] <= 8.0001, d["privacy"]
PY
"$trainer" export-model --model "$work/model.blm" --out "$work/model.blnw" > "$work/export.json"
[ -s "$work/model.blnw.vocab" ] || fail "export-model wrote no vocabulary"
"$device_sim" suggest --model "$work/model.blnw" --prompt "what is the" --prompt "i don't know" \
  > "$work/suggest.json"
/usr/bin/python3 - "$work/suggest.json" "$work/model.blnw.vocab" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
vocabulary = open(sys.argv[2]).read().split("\n")[5:]  # header and 4 special tokens
assert [x["prompt"] for x in d] == ["what is the", "i don't know"], d
for x in d:
    assert len(x["suggestions"]) == 3, x
    assert all(s in vocabulary for s in x["suggestions"]), (x, vocabulary[:10])
print("suggestions:", d)
PY
# A missing model and a non-model fail clearly.
status=0; "$device_sim" suggest --model "$work/train.json" --prompt x 2> "$work/err" || status=$?
[ "$status" = 2 ] && grep -q "is not a device model" "$work/err" || fail "a non-model: exit $status"
# A file that is not the collector's words, and a metric that is not
# there, fail clearly (the trainer before reading its corpus).
status=0; "$trainer" train --corpus fortunes --discovered-words "$work/train.json" \
  --out "$work/bad.blm" 2> "$work/err" || status=$?
[ "$status" = 2 ] && grep -q "is not a discovered-words file" "$work/err" ||
  fail "a non-words file: exit $status: $(cat "$work/err")"
status=0; "$collector" discovered-words --db "$work/blur.db" --metric 3 --out "$work/words-3.txt" \
  2> "$work/err" || status=$?
[ "$status" = 2 ] && grep -q "no metric 3" "$work/err" && [ ! -e "$work/words-3.txt" ] ||
  fail "a missing metric: exit $status: $(cat "$work/err")"
echo "keyboard loop test: passed"
