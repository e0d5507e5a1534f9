#!/usr/bin/env bash
# The privacy audit's short form (docs/privacy-audit.md): real SDK devices on
# two histories of one device's values, a fixed test, and the one-sided
# Clopper-Pearson lower bound on epsilon, which must stay under what the
# ledger charged; every charge must be the same whatever the values; the
# power rows must detect what their charge allows. With --alpha 0.0005 per
# side, a correct mechanism fails a row with probability at most 0.001 (the
# seed is fixed, so a run is repeatable). Then `history`: its JSON lines
# carry what the devices sent.
#
#   privacy_audit_test.sh BLUR_DEVICE_SIM
set -euo pipefail
sim=$1

"$sim" audit --devices 10000 --seed 2025 --alpha 0.0005

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$sim" history --metric-spec 1:loloha:0.5:16:longitudinal=2 --values 3,3,5 --devices 50 \
  --seed 9 --out "$out"
python3 - "$out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 50, len(lines)
seeds = set()
for line in lines:
    device = json.loads(line)
    assert device["spent_micros"] == [500000, 1000000, 1500000], device
    assert device["statuses"] == ["ok"] * 3, device
    reports = device["reports"]
    assert len(reports) == 3, device
    for r in reports:
        assert r["mechanism"] == "loloha" and r["epsilon_micros"] == 500000, r
        assert r["longitudinal_epsilon_micros"] == 2000000 and r["domain_size"] == 16, r
        assert r["local_hash"]["bucket"] in (0, 1), r
    # One hash seed per device and metric, whatever the value.
    assert len({(r["local_hash"]["a"], r["local_hash"]["b"]) for r in reports}) == 1, device
    seeds.add((reports[0]["local_hash"]["a"], reports[0]["local_hash"]["b"]))
assert len(seeds) > 10, f"{len(seeds)} distinct seeds over 50 devices"
print(f"history: 50 devices, 3 reports each, {len(seeds)} distinct hash seeds")
PY
