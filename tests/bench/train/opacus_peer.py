#!/usr/bin/env python3
"""Peer benchmark: LSTM language-model training throughput, plain SGD vs
DP-SGD with Opacus 1.4.0 (DPLSTM + PrivacyEngine, RDP accountant, Poisson
sampling).

Model: Embedding(5000, 64) -> 1-layer LSTM(64 -> 128, batch_first)
       -> Linear(128, 5000)
Data : fixed random dataset of 6400 sequences of 21 tokens, uniform in
       [0, 5000). Tokens 0..19 predict tokens 1..20 (T = 20).
Loss : mean cross-entropy over all B*T next-token predictions
       (= mean over the batch of the per-sequence mean, so Opacus'
       loss_reduction="mean" is the exact match).
Opt  : SGD lr 0.5, batch 64 (expected batch 64 under Poisson sampling).

Each measurement: 3 warm-up steps, then steps until --seconds of wall time
have elapsed (the step in flight when the budget runs out is completed and
counted). Time per step includes fetching the batch from the DataLoader
(for DP this includes Poisson sampling), forward, backward, and
optimizer.step() (for DP: per-sample clipping, noise, accounting hook).

Run with Debian's interpreter and:
  PYTHONPATH=/work/peer-opacus/opacus-1.4.0:/work/peer-opacus/shim
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

V, E, H, T, B = 5000, 64, 128, 20, 64
N_DATA = 6400
LR = 0.5
WARMUP = 3


class LM(nn.Module):
    def __init__(self, use_dplstm: bool):
        super().__init__()
        self.emb = nn.Embedding(V, E)
        if use_dplstm:
            from opacus.layers import DPLSTM

            self.lstm = DPLSTM(E, H, num_layers=1, batch_first=True)
        else:
            self.lstm = nn.LSTM(E, H, num_layers=1, batch_first=True)
        self.out = nn.Linear(H, V)

    def forward(self, x):
        h, _ = self.lstm(self.emb(x))
        return self.out(h)


def loss_fn(logits, y):
    return nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


def make_dataset(seed):
    g = torch.Generator().manual_seed(seed)
    seqs = torch.randint(0, V, (N_DATA, T + 1), generator=g)
    return TensorDataset(seqs)


def batches_forever(loader):
    while True:
        for (seqs,) in loader:
            yield seqs


def run(label, model, optimizer, loader, seconds):
    """Returns dict with steps, examples, elapsed, examples_per_s, step_time."""
    model.train()
    it = batches_forever(loader)

    def step():
        seqs = next(it)
        n = seqs.shape[0]
        if n == 0:  # possible (p ~ e^-64) under Poisson sampling
            return 0
        x, y = seqs[:, :-1], seqs[:, 1:]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return n

    t_w = time.perf_counter()
    for _ in range(WARMUP):
        step()
    warm_s = time.perf_counter() - t_w

    steps = examples = 0
    t0 = time.perf_counter()
    while True:
        examples += step()
        steps += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            break
    res = dict(
        steps=steps,
        examples=examples,
        elapsed_s=elapsed,
        warmup_s=warm_s,
        examples_per_s=examples / elapsed,
        step_time_s=elapsed / steps,
        mean_batch=examples / steps,
    )
    print(
        f"[{label}] {steps} steps, {examples} examples in {elapsed:.2f}s "
        f"(warm-up {WARMUP} steps {warm_s:.2f}s): "
        f"{res['examples_per_s']:.1f} examples/s, "
        f"{1000 * res['step_time_s']:.1f} ms/step, mean batch {res['mean_batch']:.1f}",
        flush=True,
    )
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0,
                    help="timed wall time per measurement (default 20)")
    ap.add_argument("--plain-dplstm", action="store_true",
                    help="also time a plain (non-private) SGD step with "
                         "opacus.layers.DPLSTM instead of nn.LSTM")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    import opacus
    from opacus import PrivacyEngine

    print(f"python {sys.version.split()[0]} ({sys.executable}), torch {torch.__version__}, "
          f"opacus {opacus.__version__} ({opacus.__file__}), "
          f"threads {torch.get_num_threads()}, seconds {args.seconds}", flush=True)

    ds = make_dataset(args.seed)
    results = {}

    # 1. plain SGD, nn.LSTM
    torch.manual_seed(args.seed)
    m = LM(use_dplstm=False)
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    dl = DataLoader(ds, batch_size=B, shuffle=True, drop_last=True)
    results["plain"] = run("plain nn.LSTM", m, opt, dl, args.seconds)
    del m, opt

    # 2. (optional) plain SGD, DPLSTM, no privacy engine
    if args.plain_dplstm:
        torch.manual_seed(args.seed)
        m = LM(use_dplstm=True)
        opt = torch.optim.SGD(m.parameters(), lr=LR)
        dl = DataLoader(ds, batch_size=B, shuffle=True, drop_last=True)
        results["plain_dplstm"] = run("plain DPLSTM", m, opt, dl, args.seconds)
        del m, opt

    # 3. DP-SGD, DPLSTM + PrivacyEngine
    torch.manual_seed(args.seed)
    m = LM(use_dplstm=True)
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    dl = DataLoader(ds, batch_size=B, shuffle=True)
    pe = PrivacyEngine(accountant="rdp")
    m, opt, dl = pe.make_private(
        module=m, optimizer=opt, data_loader=dl,
        noise_multiplier=1.0, max_grad_norm=1.0, poisson_sampling=True,
    )
    print(f"[dp] data loader {type(dl).__name__}, sample_rate "
          f"{dl.sample_rate if hasattr(dl, 'sample_rate') else '?'}, "
          f"optimizer {type(opt).__name__}, model {type(m).__name__}", flush=True)
    results["dp"] = run("DP-SGD DPLSTM+PrivacyEngine", m, opt, dl, args.seconds)
    eps = pe.get_epsilon(delta=1e-5)
    print(f"[dp] epsilon after {pe.accountant.history[-1][-1] if pe.accountant.history else 0} "
          f"steps (delta=1e-5): {eps:.3f}", flush=True)

    ratio = results["dp"]["step_time_s"] / results["plain"]["step_time_s"]
    print(f"DP/plain(nn.LSTM) step-time ratio: {ratio:.3f}  "
          f"(throughput ratio plain/DP: "
          f"{results['plain']['examples_per_s'] / results['dp']['examples_per_s']:.3f})")
    out = {
        "peer": "opacus-1.4.0",
        "torch": torch.__version__,
        "plain_examples_per_s": round(results["plain"]["examples_per_s"], 2),
        "dp_examples_per_s": round(results["dp"]["examples_per_s"], 2),
        "dp_over_plain_step_time": round(ratio, 3),
    }
    if "plain_dplstm" in results:
        r2 = results["dp"]["step_time_s"] / results["plain_dplstm"]["step_time_s"]
        print(f"DP/plain(DPLSTM) step-time ratio: {r2:.3f}")
        out["plain_dplstm_examples_per_s"] = round(results["plain_dplstm"]["examples_per_s"], 2)
        out["dp_over_plain_dplstm_step_time"] = round(r2, 3)
    out["dp_mean_batch"] = round(results["dp"]["mean_batch"], 2)
    out["seconds"] = args.seconds
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
