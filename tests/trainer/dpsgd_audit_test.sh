#!/bin/bash
# DP-SGD audited in one training run (Steinke, Nasr, Jagielski 2023):
# blur-trainer audit-dpsgd with the real trainer on a small model,
# 1000 canaries (fair coins), 400 guesses, 99.9% confidence.
#   (a) at epsilon 4 the empirical lower bound stays <= the accountant's
#       epsilon: a correct trainer fails this with probability <= 1e-3
#       (the bound's confidence; the seed is fixed, so the run is
#       deterministic);
#   (b) without privacy (epsilon inf) the same audit finds a large bound
#       (> 2): it has the power to see memorization.
set -euo pipefail
trainer=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
audit=(--canaries 1000 --guesses 400 --confidence 0.999 --seed 1)
"$trainer" audit-dpsgd "${audit[@]}" --epsilon 4 > "$work/dp.json"
"$trainer" audit-dpsgd "${audit[@]}" --epsilon inf > "$work/np.json"
python3 - "$work/dp.json" "$work/np.json" <<'PY'
import json, sys
dp, np = (json.load(open(f)) for f in sys.argv[1:])
print("DP-SGD at epsilon %.3f (sigma %.3f, %d steps): %d of %d guesses right, epsilon lower bound %.3f"
      % (dp["accountant_epsilon"], dp["noise_multiplier"], dp["steps"], dp["correct"],
         dp["guesses"], dp["epsilon_lower_bound"]))
print("not private: %d of %d guesses right, epsilon lower bound %.3f"
      % (np["correct"], np["guesses"], np["epsilon_lower_bound"]))
assert dp["epsilon_lower_bound"] <= dp["accountant_epsilon"] <= 4.0, dp
assert np["accountant_epsilon"] == "inf" and np["epsilon_lower_bound"] > 2.0, np
assert dp["canaries"] == np["canaries"] == 1000 and dp["included"] == np["included"], (dp, np)
PY
echo "DP-SGD one-run audit: ok"
