"""Analyse your own network: a plain-PyTorch MLP on the digits, then `bottlenecklab analyze`.

    cd examples && python probe_digits.py          # ~1 minute on 2 CPU cores

Trains a 6-layer `nn.Sequential` (width 32) on sklearn's 8x8 digits with full-batch Adam on
`(1/N)||Y - f(X)||^2 + lam ||theta||^2` (weight decay written out, biases included), saves
the weights (`runs/probe-digits/digits_mlp.pt`) and the data (`digits.npz`), and runs
`bottlenecklab analyze probe_digits:make_model --weights ... digits.npz --lam ...`: the
table, summary, figures and `report.html` land in `runs/probe-digits/analysis/`.
Expected: a bottleneck in the middle layers, below the output's 10 directions at the rank
rule's one cutoff (numbers in docs/analyse.md).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn

LAM = 3e-3  # weight decay lambda
STEPS = 1500
DEPTH = 6  # Linear layers
OUT = Path("runs/probe-digits")


def make_model() -> nn.Sequential:
    """The factory `bottlenecklab analyze` calls (no arguments): 64 -> 5 x 32 -> 10."""
    width, layers = 32, [nn.Linear(64, 32), nn.ReLU()]
    for _ in range(DEPTH - 2):
        layers += [nn.Linear(width, width), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(width, 10))


def main() -> int:
    torch.manual_seed(0)
    torch.set_num_threads(1)  # the 2-core machine is shared
    X, labels = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)  # [1797, 64] in [0, 1]
    Y = np.eye(10, dtype=np.float32)[labels]  # [1797, 10] one-hot
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    # the learning rate decays to 0: Adam's step noise would otherwise leave small
    # singular values (~ lr) above the rank cut-off
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, STEPS)
    for step in range(STEPS + 1):
        cost = (model(Xt) - Yt).pow(2).sum(1).mean()  # (1/N)||Y - f(X)||_F^2
        reg = LAM * sum(p.pow(2).sum() for p in model.parameters())
        opt.zero_grad()
        (cost + reg).backward()
        opt.step()
        sched.step()
        if step % 500 == 0:
            acc = (model(Xt).argmax(1) == torch.from_numpy(labels)).float().mean()
            print(f"step {step:5d}  cost {cost.item():.4f}  reg {reg.item():.4f}  acc {acc:.3f}")
    OUT.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), OUT / "digits_mlp.pt")
    np.savez(OUT / "digits.npz", X=X, Y=Y)

    from bottlenecklab.cli import main as cli

    return cli(
        [
            "analyze",
            "probe_digits:make_model",
            "--weights",
            str(OUT / "digits_mlp.pt"),
            str(OUT / "digits.npz"),
            "--lam",
            str(LAM),
            "--out",
            str(OUT / "analysis"),
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
