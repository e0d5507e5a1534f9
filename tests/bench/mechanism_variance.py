"""Empirical variance of each mechanism's estimates against the formula.

Runs the real SDK and estimator through `blur-device-sim fleet --offline`
(150 fleets of 2,000 devices per row, domain 16, uniform values) and prints,
per mechanism and epsilon, the empirical variance of (estimate - truth)
pooled over the values, the mean formula variance, and their ratio.

    python3 tests/bench/mechanism_variance.py [build/host]
"""
import json, subprocess, math, statistics, sys
build = sys.argv[1] if len(sys.argv) > 1 else "build/host"
sim = f"{build}/examples/fleet-sim/blur-device-sim"
def run(mech, eps, d, seed, n):
    out = subprocess.run([sim, "fleet", "--offline", "--mechanism", mech, "--epsilon", str(eps), "--domain", str(d),
                          "--devices", str(n), "--seed", str(seed)], capture_output=True, text=True, check=True).stdout
    return json.loads(out)
for mech, d in (("rr", 2), ("grr", 16), ("sue", 16), ("oue", 16)):
    for eps in (1, 4):
        errs = []; formula = []
        for seed in range(1, 151):
            j = run(mech, eps, d, seed, 2000)
            for e, t in zip(j["estimates"], j["true_counts"]):
                errs.append((e["estimate"] - t)); formula.append(e["stderr"] ** 2)
        var = statistics.pvariance(errs); f = statistics.mean(formula)
        print(f"{mech:4} d={d:3} eps={eps}: mean error {statistics.mean(errs):7.2f}, empirical var {var:9.1f}, formula {f:9.1f}, ratio {var/f:.3f}")
