"""On our own models the probe's numbers are the specialised measurements' numbers (the
probe is a new door to the same formulas): `leaky_resnet_layers`, `ntk_trace`,
`layer_ranks`, `weight_spectra`, `fcnn_balance_residuals`, `layer_frequency_singular_values`.
Tolerances are multiples of float64's eps (the same code on the same tensors), scaled by the
condition number where a solve with other right-hand sides is involved."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from bottlenecklab import measure, theory
from bottlenecklab.measure._layer_ranks import layer_ranks
from bottlenecklab.models import CircularCNNConfig, FCNNConfig
from bottlenecklab.probe import BottleneckProbe, ntk_trace

EPS = torch.finfo(torch.float64).eps
ROUND_OFF = 64 * EPS


def _close(a, b, rtol=ROUND_OFF):
    np.testing.assert_allclose(
        np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=0
    )


def test_leaky_resnet_table(tiny_net, tiny_data):
    X, Y = tiny_data.x_train, tiny_data.y_train
    table = measure.leaky_resnet_layers(tiny_net, X, Y, lam=0.01)
    probe = BottleneckProbe(tiny_net, X).analyze().set_index("name")
    L = tiny_net.depth
    A = probe.loc[[f"A.{l}" for l in range(1, L + 1)]]
    for col in ("stable_rank", "coi", "coi_residual", "coi_nobias", "coi_nobias_residual"):
        _close(A[col], table.column(col))
    # coi_gamma of A_{l-1} (the table pairs it with layer l); one Cholesky solve with other
    # right-hand sides: round-off times the kernel's condition number
    A_prev = probe.loc[[f"A.{l}" for l in range(L)]]
    cond = table.column("kernel_cond")
    for got, want, c in zip(A_prev["coi_gamma"], table.column("coi_gamma"), cond):
        _close(got, want, rtol=ROUND_OFF * c)
    # the weight spectrum: the table keeps the top singular values of W_l
    for l in range(1, L + 1):
        W_sv = [r["value"] for r in table.spectra if r["layer"] == l and r["matrix"] == "W"]
        _close(A.loc[f"A.{l}", "W_top_sv"][: len(W_sv)], W_sv)


def _fcnn(slope=0.0, beta=1.0):
    cfg = FCNNConfig(depth=4, width=7, slope=slope, bias_scale=beta)
    net = cfg.build(3, 2, seed=2, dtype=torch.float64)
    with torch.no_grad():
        for b in net.biases:
            b.normal_(0.0, 0.3, generator=torch.Generator().manual_seed(5))
    return net


def _as_sequential(net) -> nn.Sequential:
    """The same FCNN written as a user would (beta = 1, ReLU)."""
    mods: list[nn.Module] = []
    for l, (W, b) in enumerate(zip(net.weights, net.biases)):
        lin = nn.Linear(W.shape[1], W.shape[0], dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(W)
            lin.bias.copy_(b)
        mods.append(lin)
        if l < net.depth - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


@pytest.mark.parametrize("slope,beta", [(0.0, 1.0), (0.3, 0.5)])
def test_fcnn_adapter(slope, beta):
    net = _fcnn(slope, beta)
    X = torch.randn(20, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    probe = BottleneckProbe(net, X, jacobian_points=20)
    table = probe.analyze()
    rows = table[table["kind"] != "input"]
    assert rows["W_rank_fig1"].tolist() == layer_ranks(net)
    assert rows["W_rank"].tolist() == [np.linalg.matrix_rank(W.detach()) for W in net.weights]
    spectra = measure.weight_spectra(net)
    for l, sv in enumerate(rows["W_top_sv"], start=1):
        want = [r["value"] for r in spectra if r["layer"] == l][: len(sv)]
        _close(sv, want)
    _close(rows["balance_residual"].iloc[:-1], measure.fcnn_balance_residuals(net)["per_neuron"])
    _close(probe.summary()["ntk_trace_mean"], measure.ntk_trace(net, X).mean())
    # the same network as a user's nn.Sequential: the generic fx path, the same numbers
    seq = _as_sequential(_fcnn(0.0, 1.0))
    ref = _fcnn(0.0, 1.0)
    _close(ntk_trace(seq, X), measure.ntk_trace(ref, X), rtol=1e3 * EPS)
    generic = BottleneckProbe(seq, X).analyze()
    adapted = BottleneckProbe(ref, X).analyze()
    for col in ("rank", "stable_rank", "coi_gamma", "W_rank", "W_rank_fig1", "balance_residual"):
        _close(generic[col].fillna(0), adapted[col].fillna(0), rtol=1e3 * EPS)


def test_circular_cnn_adapter():
    cfg = CircularCNNConfig(depth=3, channels=2, size=4)
    net = cfg.build(16, 16, seed=0, dtype=torch.float64)
    X = torch.randn(12, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    rows = BottleneckProbe(net, X, top=1000).analyze()
    rows = rows[rows["kind"] != "input"]
    spectra = measure.layer_frequency_singular_values(net)
    for sv, s in zip(rows["W_top_sv"], spectra):
        _close(sv, s.reshape(-1).sort(descending=True).values)
    with torch.no_grad():
        _, post = net.forward_path(X)
    for l in range(1, cfg.depth):
        A = post[l].reshape(len(X), -1)
        _close(rows["stable_rank"].iloc[l - 1], theory.stable_rank(A))
