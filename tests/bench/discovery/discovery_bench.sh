#!/usr/bin/env bash
# The word-discovery benchmark (BENCHMARKS.md, "Word discovery"): Zipf(1.1)
# over Debian's wamerican words up to 10 characters, one word per device,
# epsilon = 4, blur-device-sim discover with pem, or sfp with MECHANISM=sfp
# (every device a real blur::Client; the collector's decoder in process).
# Prints precision, recall and F1 of the top 10, 20 and 32 per seed, and
# the decoding time.
#
#   [MECHANISM=pem|sfp] tests/bench/discovery/discovery_bench.sh BLUR_DEVICE_SIM [DEVICES] [SEEDS...]
#   (defaults: pem, 1000000 devices, seeds 1 2 3)
set -euo pipefail
device_sim=$1
devices=${2:-1000000}
shift $(( $# >= 2 ? 2 : 1 ))
seeds=("$@")
mechanism=${MECHANISM:-pem}
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/zipf_words.py" --devices "$devices" --out "$work/words.txt" \
  --truth "$work/truth.tsv"
printf '%s\n\n' "$mechanism"
printf '| n | seed | top-10 P / R / F1 | top-20 P / R / F1 | top-32 P / R / F1 | decode s |\n'
printf '|---|---|---|---|---|---|\n'
for seed in "${seeds[@]}"; do
  "$device_sim" discover --mechanism "$mechanism" --epsilon 4 --values "$work/words.txt" --top-k 32 \
    --seed "$seed" --offline 2> "$work/err.txt" > "$work/out.json"
  /usr/bin/python3 - "$work/out.json" "$work/truth.tsv" "$seed" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
truth = [line.split("\t")[0] for line in open(sys.argv[2])]
found = [w["word"] for w in out["words"]]
cells = []
for k in (10, 20, 32):
    hits = len(set(found[:k]) & set(truth[:k]))
    p, r = hits / max(len(found[:k]), 1), hits / k
    f1 = 0 if hits == 0 else 2 * p * r / (p + r)
    cells.append(f"{p:.3f} / {r:.3f} / {f1:.3f}")
print(f"| {out['n']} | {sys.argv[3]} | " + " | ".join(cells) + f" | {out['decode_seconds']:.2f} |")
PY
done
