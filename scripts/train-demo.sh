#!/usr/bin/env bash
# The language-model demo: trains the DP-SGD next-word LSTM on Debian's
# fortunes (a DP vocabulary, then DP-SGD at the target epsilon), evaluates
# it against the unigram baseline, suggests next words for a few prompts,
# and exports the int8 model the device SDK runs. A few minutes on 2 cores.
# Does its own set-up (Debian packages, sources, host build).
#
#   scripts/train-demo.sh [--epsilon E] [--epochs N] [--discovered-words FILE]
#
# --discovered-words: the vocabulary is a word-discovery metric's
# discovered words, from `blur-collector discovered-words --out FILE`
# (scripts/demo.sh passes its collector's), instead of the DP vocabulary
# counted centrally.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

epsilon=3 epochs=2 vocabulary=()
while [ $# -gt 0 ]; do
  case $1 in
    --epsilon) epsilon=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --discovered-words) vocabulary+=(--discovered-words "$2"); shift 2 ;;
    *) echo "usage: $0 [--epsilon E] [--epochs N] [--discovered-words FILE]" >&2
       exit 2 ;;
  esac
done

toolchains/setup.sh
echo "train-demo: building (host preset)"
cmake --preset host > build-host-configure.log 2>&1 || { cat build-host-configure.log; exit 1; }
rm -f build-host-configure.log
cmake --build --preset host --target blur-trainer blur-device-sim | tail -n 1
trainer=build/host/collector/trainer/blur-trainer

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ${#vocabulary[@]} -gt 0 ]; then
  echo "train-demo: the discovered words as vocabulary + DP-SGD at epsilon $epsilon (delta 1e-5), $epochs epochs"
else
  echo "train-demo: DP vocabulary + DP-SGD at epsilon $epsilon (delta 1e-5), $epochs epochs"
fi
"$trainer" train --corpus fortunes --epsilon "$epsilon" --delta 1e-5 --epochs "$epochs" \
  "${vocabulary[@]}" --out "$work/model.blm" > "$work/train.json"
"$trainer" eval --model "$work/model.blm" > "$work/eval.json"
"$trainer" suggest --model "$work/model.blm" --prompt "the meaning of life is" \
  --prompt "you will be" --prompt "i don't know" --prompt "a computer is" > "$work/suggest.json"
"$trainer" export-model --model "$work/model.blm" --out "$work/model.blnw" > "$work/export.json"
# A simulated keyboard: the SDK's int8 predictor on the exported file.
build/host/collector/tools/device-sim/blur-device-sim suggest --model "$work/model.blnw" \
  --prompt "the meaning of life is" --prompt "you will be" > "$work/device.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
t = json.load(open(f"{w}/train.json")); e = json.load(open(f"{w}/eval.json"))
s = json.load(open(f"{w}/suggest.json")); x = json.load(open(f"{w}/export.json"))
p = t["privacy"]
print(f"\nprivacy: epsilon {p['epsilon']:.3f} at delta {p['delta']:g} (RDP accountant, order {p['order']:g}),"
      f" {'vocabulary + ' if t['vocabulary']['source'] == 'dp' else ''}{t['training']['steps']} DP-SGD steps, noise multiplier {t['training']['noise_multiplier']:.3f}")
print(f"training: about {t['units']['estimate']:.0f} units ({t['units']['source']}),"
      f" {t['seconds']:.0f} s; validation ({t['validation']['source']}):"
      f" top-1 {t['validation'].get('top1', float('nan')):.3f}\n")
print(f"{'test split':<22}{'top-1':>8}{'top-3':>8}{'perplexity':>12}")
print(f"{'DP model':<22}{e['top1']:>8.3f}{e['top3']:>8.3f}{e['perplexity']:>12.1f}")
u = e["unigram"]
print(f"{'unigram baseline':<22}{u['top1']:>8.3f}{u['top3']:>8.3f}{u['perplexity']:>12.1f}\n")
for item in s:
    print(f"  \"{item['prompt']} ...\" -> {', '.join(item['suggestions'])}")
print(f"\ndevice model: {x['bytes']} bytes int8, top-1 agrees with the float model on "
      f"{100 * x['top1_agreement_with_float']:.1f}% of {x['contexts_checked']} held-out contexts")
print(f"vocabulary: {t['vocabulary']['size']} tokens from {t['vocabulary']['source']}")
for item in json.load(open(f"{w}/device.json")):
    print(f"  on the device: \"{item['prompt']} ...\" -> {', '.join(item['suggestions'])}")
PY
