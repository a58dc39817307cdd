"""A user's network: an `nn.Sequential` trained here with plain PyTorch and explicit weight
decay on the digits shows its bottleneck (low-rank middle layers) to the probe."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn

from bottlenecklab.probe import BottleneckProbe


def test_trained_sequential_shows_its_bottleneck():
    torch.manual_seed(0)
    X, labels = load_digits(return_X_y=True)
    X, labels = X[:600] / 16.0, labels[:600]
    Xt = torch.tensor(X, dtype=torch.float64)
    Yt = torch.tensor(np.eye(10)[labels], dtype=torch.float64)
    w = 32
    layers: list[nn.Module] = [nn.Linear(64, w), nn.ReLU()]
    for _ in range(4):
        layers += [nn.Linear(w, w), nn.ReLU()]
    net = nn.Sequential(*layers, nn.Linear(w, 10)).double()
    lam, steps = 3e-3, 800
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for _ in range(steps):
        cost = (net(Xt) - Yt).pow(2).sum(1).mean()
        loss = cost + lam * sum(p.pow(2).sum() for p in net.parameters())
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    assert (net(Xt).argmax(1).numpy() == labels).mean() > 0.9
    probe = BottleneckProbe(net, Xt, Yt, lam)
    table, s = probe.analyze(), probe.summary()
    hidden = table[table["kind"] == "activation"]
    # at the one cutoff (0.3% of each layer's s_1): fewer directions in the middle than
    # the output's 10, many at the first hidden layer and the input; a few dominant ones
    # (at 0.1 s_1) in the middle
    k = s["bottleneck_rank"]
    assert s["verdicts"]["bottleneck"].startswith(f"bottleneck: rank {k} ")
    assert 1 <= k <= s["output_rank"] < hidden["rank_centered"].iloc[0] < s["input_rank"]
    assert set(s["bottleneck_layers"]) <= set(hidden["name"].iloc[1:])
    middle = table[table["bottleneck"]]
    assert (middle["rank_at_1e-1"] <= 6).all()
    assert s["loss"]["cost"] < 0.1
    cert = s["certificate"]  # one ReLU call per hidden layer is found
    assert len(cert["kinks_per_layer"]) >= 2 and cert["stationarity"] <= cert["smooth_stationarity"]
