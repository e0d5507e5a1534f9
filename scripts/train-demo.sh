#!/usr/bin/env bash
# The language-model half of the keyboard demo: the public model (pretrained
# once on Debian's public text and cached, scripts/lib/public_model.sh),
# grown by the words a fleet discovered and fine-tuned with DP-SGD on
# Debian's fortunes (the users' private text); then the test split's top-1 /
# top-3 of the DP model beside the public model alone and the unigram
# baseline, suggestions for the same prompts from the float model and from
# the int8 model a simulated keyboard runs with the SDK, and the privacy
# spent. Does its own set-up (Debian packages, sources, host build).
#
#   scripts/train-demo.sh [--epsilon E] [--epochs N] [--discovered-words FILE] [--out DIR]
#                         [--public-model FILE] [--seed S]
#
# --discovered-words: a word-discovery metric's words (`blur-collector
# discovered-words --out FILE`; scripts/demo.sh passes its fleet's): those
# the public model lacks join its vocabulary before the fine-tuning.
# --out: keep the outputs (JSON) there; scripts/demo.sh reads them.
# --public-model: start from this public model instead of the cached one;
# --seed: a reproducible fine-tuning (its noise is then not secret). The
# test trainer.keyboard_model runs this script so, with BLUR_DEMO_BUILT=1
# and the programs in BLUR_TRAINER and BLUR_DEVICE_SIM.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

epsilon=8 epochs=2 words=() out="" public="" seed=()
while [ $# -gt 0 ]; do
  case $1 in
    --epsilon) epsilon=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --discovered-words) words=(--discovered-words "$2"); shift 2 ;;
    --out) out=$2; shift 2 ;;
    --public-model) public=$2; shift 2 ;;
    --seed) seed=(--seed "$2"); shift 2 ;;
    *) echo "usage: $0 [--epsilon E] [--epochs N] [--discovered-words FILE] [--out DIR]" \
            "[--public-model FILE] [--seed S]" >&2
       exit 2 ;;
  esac
done

. scripts/lib/demo_build.sh
build_demo_programs blur-trainer blur-device-sim
trainer=${BLUR_TRAINER:-build/demo/collector/trainer/blur-trainer}
device_sim=${BLUR_DEVICE_SIM:-build/demo/collector/tools/device-sim/blur-device-sim}
if [ -n "$public" ]; then
  public_model=$public
else
  . scripts/lib/public_model.sh
  ensure_public_model "$trainer"
fi

if [ -n "$out" ]; then
  work=$out && mkdir -p "$work"
else
  work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT
fi
echo "train-demo: DP-SGD fine-tuning of the public model on the fortunes' training split" \
     "(epsilon $epsilon, delta 1e-5, $epochs epochs)"
"$trainer" train --corpus fortunes --init-from "$public_model" "${words[@]}" \
  --epsilon "$epsilon" --delta 1e-5 --epochs "$epochs" --batch 512 --learning-rate 2 \
  --lr-schedule cosine --validation-noise 0 --progress-every 10 "${seed[@]}" \
  --out "$work/model.blm" > "$work/train.json" 2> >(sed -u 's/^/  /' >&2)
"$trainer" eval --model "$work/model.blm" > "$work/eval.json"
"$trainer" eval --model "$public_model" --corpus fortunes > "$work/eval-public.json"
# What a user has typed so far, mid-phrase: the next word depends on it.
prompts=("i don't" "the united" "the end of the" "you have a" "there is no"
         "it is better to" "once upon a" "what do you")
prompt_args=()
for p in "${prompts[@]}"; do prompt_args+=(--prompt "$p"); done
"$trainer" suggest --model "$work/model.blm" "${prompt_args[@]}" > "$work/suggest.json"
"$trainer" suggest --model "$public_model" "${prompt_args[@]}" > "$work/suggest-public.json"
"$trainer" export-model --model "$work/model.blm" --out "$work/model.blnw" > "$work/export.json"
# A simulated keyboard: the SDK's int8 predictor on the exported file.
"$device_sim" suggest --model "$work/model.blnw" "${prompt_args[@]}" > "$work/device.json"

python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
load = lambda name: json.load(open(f"{w}/{name}.json"))
t, e, ep, x = load("train"), load("eval"), load("eval-public"), load("export")
p, v = t["privacy"], t["vocabulary"]
print(f"\n  vocabulary: {v['size']} words = the public model's {v.get('public_size', v['size'])}"
      f" + {len(v.get('added', []))} discovered by the fleet"
      + (f": {', '.join(v['added'][:12])}{', ...' if len(v['added']) > 12 else ''}" if v.get("added") else ""))
print(f"  fine-tuning: {t['training']['steps']} DP-SGD steps, noise multiplier"
      f" {t['training']['noise_multiplier']:.3f}, {t['seconds']:.0f} s")
print(f"\n  {'fortunes test split (held out)':<34}{'top-1':>7}{'top-3':>7}")
print(f"  {'DP fine-tuned model':<34}{100 * e['top1']:>6.1f}%{100 * e['top3']:>6.1f}%")
print(f"  {'public model alone':<34}{100 * ep['top1']:>6.1f}%{100 * ep['top3']:>6.1f}%")
u = e["unigram"]
print(f"  {'unigram baseline (word counts)':<34}{100 * u['top1']:>6.1f}%{100 * u['top3']:>6.1f}%")
floats = {s["prompt"]: s["suggestions"] for s in load("suggest")}
public = {s["prompt"]: s["suggestions"] for s in load("suggest-public")}
device = {s["prompt"]: s["suggestions"] for s in load("device")}
print(f"\n  {'next word after ...':<28}{'DP model (float)':<24}{'on the device (int8)':<24}public model alone")
for prompt, words in floats.items():
    print(f"  {prompt + ' ...':<28}{', '.join(words):<24}{', '.join(device[prompt]):<24}"
          f"{', '.join(public[prompt])}")
distinct = len({tuple(s) for s in floats.values()})
print(f"  {distinct} different suggestion lists for {len(floats)} prompts;"
      f" the int8 model's top-1 agrees with the float model's on"
      f" {100 * x['top1_agreement_with_float']:.1f}% of {x['contexts_checked']} held-out contexts"
      f" ({x['bytes']:,} bytes)")
print(f"\n  DP-SGD: epsilon {p['epsilon']:.2f} at delta {p['delta']:g} (RDP accountant; PLD"
      f" {p.get('epsilon_pld', float('nan')):.2f}) for the fine-tuning on the fortunes")
PY
