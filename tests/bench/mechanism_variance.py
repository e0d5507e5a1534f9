"""Empirical variance of each mechanism's estimates against the formula.

Runs the real SDK and estimator through `blur-device-sim fleet --offline`
(150 fleets of 2,000 devices per row, domain 16, uniform values; numeric
mechanisms: the mean over 0..100) and prints,
per mechanism and epsilon, the empirical variance of (estimate - truth)
pooled over the values, the mean formula variance, and their ratio.

    python3 tests/bench/mechanism_variance.py [build/host] [mechanism,mechanism,...]
"""
import json, subprocess, math, statistics, sys
build = sys.argv[1] if len(sys.argv) > 1 else "build/host"
sim = f"{build}/collector/tools/device-sim/blur-device-sim"
def run(mech, eps, d, seed, n):
    out = subprocess.run([sim, "fleet", "--offline", "--mechanism", mech, "--epsilon", str(eps), "--domain", str(d),
                          "--devices", str(n), "--seed", str(seed)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)
only = sys.argv[2].split(",") if len(sys.argv) > 2 else None  # e.g. sue,oue,rappor
for mech, d in (("rr", 2), ("grr", 16), ("sue", 16), ("oue", 16), ("hr", 16), ("olh", 16), ("blh", 16),
                ("rappor", 16)):
    if only and mech not in only: continue
    for eps in (1, 4):
        errs = []; formula = []
        for seed in range(1, 151):
            j = run(mech, eps, d, seed, 2000)
            for e, t in zip(j["estimates"], j["true_counts"]):
                errs.append((e["estimate"] - t)); formula.append(e["stderr"] ** 2)
        var = statistics.pvariance(errs); f = statistics.mean(formula)
        print(f"{mech:4} d={d:3} eps={eps}: mean error {statistics.mean(errs):7.2f}, empirical var {var:9.1f}, formula {f:9.1f}, ratio {var/f:.3f}")
# Numeric mechanisms: the mean of values 0..100; the empirical variance of
# (estimated mean - true mean) against the mean squared standard error.
for mech in ("laplace", "onebit"):
    if only and mech not in only: continue
    for eps in (1, 4):
        errs = []; formula = []
        for seed in range(1, 151):
            j = run(mech, eps, 101, seed, 2000)
            e = j["estimates"][0]
            errs.append(e["estimate"] - j["true_mean"]); formula.append(e["stderr"] ** 2)
        var = statistics.pvariance(errs); f = statistics.mean(formula)
        print(f"{mech:7} d=101 eps={eps}: mean error {statistics.mean(errs):6.3f}, empirical var {var:8.4f}, stderr^2 {f:8.4f}, ratio {var/f:.3f}")
