#!/bin/bash
# blur-trainer's commands end to end on a small corpus
# (Debian's fortunes-min "fortunes" file): privacy (published anchor and
# calibration), train with a checkpoint interrupted and resumed (the same
# model as an uninterrupted run; a resume that disagrees with the
# checkpoint's plan is refused), no private statistics in the summary or
# progress lines, tuning runs composed, public or DP validation, eval,
# export-model (device agreement), canary, suggest, public pretraining +
# private fine-tuning (--init-from), and clear errors for bad input.
set -euo pipefail
trainer=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
corpus=/usr/share/games/fortunes/fortunes
json() { python3 -c "import json,sys; d=json.load(open('$1')); print(eval('d' + sys.argv[1]))" "$2"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Privacy: TF Privacy's MNIST anchor (N 60000, batch 150, sigma 1.3, 15 epochs).
"$trainer" privacy --sample-rate 0.0025 --noise-multiplier 1.3 --steps 6000 --delta 1e-5 > "$work/p.json"
python3 - "$work/p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert abs(d["epsilon"] - 0.7242) < 5e-5, d
assert d["accountant"] == "rdp" and d["order"] > 1, d
# PLD at the same noise: tighter than RDP (0.6401, docs/math.md §6.7).
assert abs(d["epsilon_pld"] - 0.6401) < 0.0065, d
PY
"$trainer" privacy --sample-rate 0.0025 --target-epsilon 0.7242 --steps 6000 --delta 1e-5 > "$work/c.json"
python3 -c "import json; d=json.load(open('$work/c.json')); assert abs(d['noise_multiplier']-1.3) < 2e-3 and d['epsilon'] <= 0.7242, d"
status=0; "$trainer" privacy --sample-rate 0.01 --steps 10 --delta 1e-5 2> "$work/err" || status=$?
[ "$status" = 2 ] && grep -q "exactly one of" "$work/err" || fail "privacy without sigma: exit $status"

small=(--corpus "$corpus" --vocab-size 300 --embedding 16 --hidden 24 --epochs 2 --batch 32
       --learning-rate 2 --momentum 0.9 --seed 7 --progress-every 1000)
# An uninterrupted DP run, and the same run stopped at step 10 and resumed.
"$trainer" train "${small[@]}" --epsilon 8 --out "$work/full.blm" > "$work/full.json" 2> "$work/full.log"
status=0
"$trainer" train "${small[@]}" --epsilon 8 --out "$work/resumed.blm" --checkpoint "$work/ck" \
  --checkpoint-every 4 --stop-after 10 > /dev/null 2> "$work/stop.log" || status=$?
[ "$status" = 1 ] && grep -q "stopped after step 10" "$work/stop.log" || fail "stop-after: exit $status"
"$trainer" train "${small[@]}" --epsilon 8 --out "$work/resumed.blm" --checkpoint "$work/ck" \
  --resume > "$work/resumed.json" 2> "$work/resumed.log"
grep -q "resumed at step 10" "$work/resumed.log" || fail "no resume"
python3 - "$work/full.json" "$work/full.log" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
p = d["privacy"]
assert 7.5 < p["epsilon"] <= 8.0 and p["delta"] == 1e-5 and p["accountant"] == "rdp", p
assert 0 < p["epsilon_pld"] < p["epsilon"], p  # the same run under the PLD accountant
assert d["vocabulary"]["source"] == "dp" and d["training"]["noise_multiplier"] > 0, d
phases = [x["phase"] for x in p["phases_per_run"]]
assert phases == ["vocabulary", "unit count", "dp-sgd", "validation"], p
assert p["tuning_runs"] == 1 and p["epsilon_per_run"] == p["epsilon"], p
# Nothing computed from private data without noise: N only as its DP
# count, no batch sizes, losses, clipped counts or exact validation.
assert set(d["units"]) == {"estimate", "source"} and d["units"]["source"] == "dp count", d
assert d["units"]["estimate"] != int(d["units"]["estimate"]), d  # a noisy count
for k in ("final_batch_loss", "examples_per_second", "seconds"): assert k not in d["training"], d
v = d["validation"]
assert v["source"].startswith("dp") and "perplexity" not in v and 0 <= v["top1"] <= 1, v
assert d["training"]["noise"]["kind"] == "exact discrete Gaussian on a fixed-point grid", d
log = open(sys.argv[2]).read()
assert not re.search(r"\b(loss|batch|clipped|examples/s)\b", log), log
assert "units (dp count)" in log, log
PY
# The bug of issue 25: a run resumed with other options used to train with
# the old sigma and steps and claim the new ones. Now what disagrees with
# the checkpoint's plan is refused (exit 2), nothing written; a resume
# without the options trains and accounts the plan: the same summary as the
# uninterrupted run.
one=(--corpus "$corpus" --vocab-size 300 --embedding 16 --hidden 24 --batch 32
     --learning-rate 2 --seed 7 --progress-every 1000 --epsilon 3)
"$trainer" train "${one[@]}" --epochs 1 --out "$work/one.blm" > "$work/one.json" 2> /dev/null
status=0
"$trainer" train "${one[@]}" --epochs 1 --checkpoint "$work/ck1" --stop-after 5 \
  --out "$work/r1.blm" > /dev/null 2>&1 || status=$?
[ "$status" = 1 ] || fail "stop-after 5: exit $status"
for other in "--epochs 4" "--epsilon 5" "--batch 64" "--clip 0.5" "--noise-multiplier 1.2" \
             "--delta 1e-6" "--seed 8" "--tuning-runs 2"; do
  status=0
  # shellcheck disable=SC2086
  "$trainer" train --corpus "$corpus" --checkpoint "$work/ck1" --resume $other \
    --out "$work/r1.blm" > /dev/null 2> "$work/err" || status=$?
  [ "$status" = 2 ] && grep -q "disagrees with the checkpoint" "$work/err" && [ ! -e "$work/r1.blm" ] ||
    fail "resume with $other: exit $status, $(cat "$work/err")"
done
"$trainer" train --corpus "$corpus" --checkpoint "$work/ck1" --resume --out "$work/r1.blm" \
  > "$work/r1.json" 2> /dev/null
python3 - "$work/one.json" "$work/r1.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for k in ("epsilon", "epsilon_pld", "phases_per_run", "tuning_runs"):
    assert a["privacy"][k] == b["privacy"][k], (k, a["privacy"], b["privacy"])
for k in ("steps", "sample_rate", "noise_multiplier", "epochs", "expected_batch"):
    assert a["training"][k] == b["training"][k], (k, a["training"], b["training"])
assert a["units"] == b["units"] and a["validation"] == b["validation"], (a, b)
assert b["privacy"]["epsilon"] <= 3.0, b
PY
cmp <("$trainer" export-model --model "$work/one.blm" --out "$work/one.blnw" >/dev/null; cat "$work/one.blnw") \
    <("$trainer" export-model --model "$work/r1.blm" --out "$work/r1.blnw" >/dev/null; cat "$work/r1.blnw") ||
  fail "resumed run differs from the uninterrupted one"

# Tuning is accounted: 4 runs at epsilon 8 in total give each run a larger
# noise multiplier than one run at 8, and the stated total is <= 8.
"$trainer" train "${small[@]}" --epsilon 8 --tuning-runs 4 --validation-corpus \
  /usr/share/games/fortunes/riddles --out "$work/t4.blm" > "$work/t4.json" 2> /dev/null
python3 - "$work/full.json" "$work/t4.json" <<'PY'
import json, sys
one, four = (json.load(open(f)) for f in sys.argv[1:])
p = four["privacy"]
assert p["tuning_runs"] == 4 and p["epsilon"] <= 8.0 and p["epsilon_per_run"] < p["epsilon"], p
assert "4 runs" in p["composition"], p
assert four["training"]["noise_multiplier"] > one["training"]["noise_multiplier"], (one, four)
# Public validation text: exact figures, no validation phase in the accounting.
v = four["validation"]
assert v["source"].startswith("public corpus") and "perplexity" in v and v["units"] > 10, v
assert "validation" not in [x["phase"] for x in p["phases_per_run"]], p
PY
"$trainer" export-model --model "$work/full.blm" --out "$work/full.blnw" > "$work/x.json"
"$trainer" export-model --model "$work/resumed.blm" --out "$work/resumed.blnw" > /dev/null
cmp "$work/full.blnw" "$work/resumed.blnw" || fail "resumed run differs from the uninterrupted one"
python3 - "$work/x.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["contexts_checked"] >= 500 and d["top1_agreement_with_float"] >= 0.95, d
PY

# Non-private training (same code path), eval against the unigram baseline.
"$trainer" train "${small[@]}" --epsilon inf --out "$work/np.blm" \
  --canary "my secret number is nine one four seven" --canary-repeats 30 > "$work/np.json" 2> /dev/null
python3 -c "import json; d=json.load(open('$work/np.json')); assert d['privacy']['epsilon']=='inf' and d['training']['clip_norm']==0, d"
"$trainer" eval --model "$work/np.blm" --split validation > "$work/e.json"
python3 - "$work/e.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("top1", "top3", "perplexity"):
    assert k in d and k in d["unigram"], d
assert 0 <= d["top1"] <= d["top3"] <= 1 and d["perplexity"] > 1, d
assert d["word_targets"] > 100, d
PY
"$trainer" canary --model "$work/np.blm" --canary "my secret number is nine one four seven" \
  --secret-words 4 --candidates 256 > "$work/k.json"
python3 -c "import json; d=json.load(open('$work/k.json')); assert d['candidates']==256 and 0 <= d['exposure'] <= 8 and d['rank'] >= 1, d"
"$trainer" suggest --model "$work/np.blm" --prompt "what is the" --prompt "" > "$work/s.json"
python3 -c "import json; d=json.load(open('$work/s.json')); assert len(d)==2 and all(len(x['suggestions'])==3 for x in d), d"

# Public pretraining, private fine-tuning: a model trained without privacy
# on public text (here fortunes-min's "literature" file stands in for it),
# then DP-SGD on the private corpus starting from it. The fine-tuning uses
# the public model's vocabulary and sizes (not --embedding) and its
# accounting covers only itself: no vocabulary phase.
public=/usr/share/games/fortunes/literature
"$trainer" train --corpus "$public" --epsilon inf --vocab-size 300 --embedding 16 --hidden 24 \
  --epochs 2 --batch 32 --learning-rate 1 --lr-schedule cosine --seed 3 --progress-every 1000 \
  --out "$work/public.blm" > "$work/public.json" 2> /dev/null
"$trainer" train --corpus "$corpus" --epsilon 8 --init-from "$work/public.blm" --embedding 32 \
  --epochs 2 --batch 32 --learning-rate 1 --seed 7 --progress-every 1000 \
  --out "$work/ft.blm" > "$work/ft.json" 2> /dev/null
python3 - "$work/ft.json" "$work/public.blm" "$public" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["vocabulary"]
assert v["source"] == "the public model " + sys.argv[2] and v["central_epsilon"] == 0, v
assert v["size"] == 300 and d["model"]["embedding"] == 16 and d["model"]["hidden"] == 24, d
assert d["pretrained"]["model"] == sys.argv[2], d
assert d["pretrained"]["summary"]["corpus"] == sys.argv[3], d
assert d["pretrained"]["summary"]["privacy"]["epsilon"] == "inf", d
p = d["privacy"]
assert 7.5 < p["epsilon"] <= 8.0, p  # DP-SGD alone spends the whole target
PY
# --train-only: the same plan and accounting, the groups named in the
# summary; without --init-from, or with an unknown group, refused.
"$trainer" train --corpus "$corpus" --epsilon 8 --init-from "$work/public.blm" --train-only lstm,output \
  --epochs 2 --batch 32 --learning-rate 1 --seed 7 --progress-every 1000 \
  --out "$work/ft_some.blm" > "$work/ft_some.json" 2> /dev/null
python3 - "$work/ft.json" "$work/ft_some.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["training"]["trained"] == "all" and b["training"]["trained"] == "lstm,output", (a, b)
assert a["privacy"] == b["privacy"], (a["privacy"], b["privacy"])
assert a["training"]["noise_multiplier"] == b["training"]["noise_multiplier"], b
PY
for bad in "--train-only output" "--init-from $work/public.blm --train-only output,softmax"; do
  status=0
  # shellcheck disable=SC2086 # the options are split on purpose
  "$trainer" train --corpus "$corpus" --epsilon 8 $bad --out "$work/m.blm" 2> "$work/err" || status=$?
  [ "$status" = 2 ] && grep -q -- "--train-only" "$work/err" && [ ! -e "$work/m.blm" ] ||
    fail "$bad: exit $status, $(cat "$work/err")"
done

# The fine-tuning starts at the public model's parameters: one step at a
# negligible learning rate leaves its predictions on the public text as
# they were (same top-1, perplexity within 1e-6).
"$trainer" train --corpus "$corpus" --epsilon inf --init-from "$work/public.blm" \
  --epochs 0.001 --learning-rate 1e-12 --momentum 0 --seed 7 --out "$work/same.blm" > /dev/null 2>&1
"$trainer" eval --model "$work/public.blm" --corpus "$public" > "$work/e_public.json"
"$trainer" eval --model "$work/same.blm" --corpus "$public" > "$work/e_same.json"
python3 - "$work/e_public.json" "$work/e_same.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert a["top1"] == b["top1"] and abs(a["perplexity"] / b["perplexity"] - 1) < 1e-6, (a, b)
PY
status=0
"$trainer" train --corpus "$corpus" --init-from "$work/public.blm" --vocabulary "$work/public.blm" \
  --out "$work/m.blm" 2> "$work/err" || status=$?
[ "$status" = 2 ] && grep -q "init-from brings its own vocabulary" "$work/err" && [ ! -e "$work/m.blm" ] ||
  fail "--init-from with --vocabulary: exit $status"

# Bad input: a clear message and a non-zero exit, nothing written.
status=0; "$trainer" train --corpus "$work/missing.txt" --out "$work/m.blm" 2> "$work/err" || status=$?
[ "$status" = 1 ] && grep -q "missing.txt" "$work/err" && [ ! -e "$work/m.blm" ] || fail "missing corpus: $status"
status=0; "$trainer" train --corpus "$corpus" --epsilon abc --out "$work/m.blm" 2> "$work/err" || status=$?
[ "$status" = 2 ] || fail "bad epsilon: exit $status"
status=0; "$trainer" eval --model "$corpus" 2> "$work/err" || status=$?
[ "$status" = 1 ] && grep -q "not a Blur model file" "$work/err" || fail "foreign model: exit $status"
echo "language model CLI: ok"
