"""The certificate's batched minimization against the former one, kept here as an oracle.

`measure.certify` forms the Jacobian `dg/ds` of the generalized gradient in the kink
derivatives from per-sample gradient factors (or, for other models, from per-sample
gradients by `vmap`) and solves each box least-squares problem from `J^T J`. The oracle
below is the former implementation: one gradient evaluation per kink entry, the Jacobian
as exact differences `g(s + e_k) - g(s)`, and a QR factorization of `J`. Both run the same
box Gauss-Newton rounds, so the certificates agree to round-off.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from bottlenecklab.measure import KinkMode, certify
from bottlenecklab.measure import _certify as cert_module
from bottlenecklab.measure._certify import box_least_squares
from bottlenecklab.models import FCNNConfig, LeakyResNetConfig
from bottlenecklab.tasks import COSTS, TeacherConfig

EPS = torch.finfo(torch.float64).eps
RTOL = 1e6 * EPS  # two exact solvers of the same problems (QR vs Gram): round-off, ~2e-10


def _oracle(net: nn.Module, X: torch.Tensor, Y: torch.Tensor, lam: float, tau: float):
    """`(stationarity, rounds)` as the former `certify` computed them."""
    net = net.double()
    params = [p for p in net.parameters() if p.requires_grad]
    forward = getattr(net, "forward_twice_differentiable", net)
    cost = COSTS["mse"]

    def reg() -> torch.Tensor:
        r = getattr(net, "regularization", None)
        return r(lam) if r is not None else lam * sum(p.pow(2).sum() for p in params)

    def flat(grads) -> torch.Tensor:
        return torch.cat(
            [(torch.zeros_like(p) if g is None else g).reshape(-1) for p, g in zip(params, grads)]
        )

    force = float(flat(torch.autograd.grad(reg(), params, allow_unused=True)).norm())
    scale = force if lam > 0 and force > 0 else 1.0
    rec = KinkMode(tau)
    with rec:
        loss = cost(forward(X), Y) + reg()
    smooth = float(flat(torch.autograd.grad(loss, params, allow_unused=True)).norm()) / scale
    calls, n = rec.calls, len(X)
    if not sum(int(c.mask.sum()) for c in calls):
        return smooth, 0
    hit = torch.zeros(n, dtype=torch.bool)
    for c in calls:
        if c.z.dim() >= 1 and c.z.shape[0] == n:
            hit |= c.mask.reshape(n, -1).any(1)
        else:
            hit[:] = True
    rows, rest = hit.nonzero().squeeze(1), (~hit).nonzero().squeeze(1)
    fixed = reg()
    if len(rest):
        fixed = fixed + cost(forward(X[rest]), Y[rest]) * (len(rest) / n)
    g_fixed = flat(torch.autograd.grad(fixed, params, allow_unused=True))
    # (the former code indexed every call by `rows`, failing where a call's leading axis
    # is not the samples'; there all rows are kept, and so is every call whole)
    separable = all(c.z.dim() >= 1 and c.z.shape[0] == n for c in calls)
    masks = [c.mask[rows] if separable else c.mask for c in calls]
    zs = [c.z[rows] if separable else c.z for c in calls]
    s0 = [(z[m] > 0).double() for z, m in zip(zs, masks)]
    sizes = [len(t) for t in s0]

    def gradient(s: torch.Tensor) -> torch.Tensor:
        with KinkMode(tau, list(torch.split(s, sizes)), masks=masks):
            F_s = cost(forward(X[rows]), Y[rows]) * (len(rows) / n)
        return g_fixed + flat(torch.autograd.grad(F_s, params, allow_unused=True))

    s = torch.cat(s0)
    g = gradient(s)
    best, done = float(g.pow(2).sum()), 0
    while done < 8:
        done += 1
        cols = []
        for i in range(len(s)):
            e = s.clone()
            e[i] += 1.0 if s[i] < 0.5 else -1.0
            cols.append((gradient(e) - g) * (1.0 if s[i] < 0.5 else -1.0))
        J = torch.stack(cols, 1)
        s_new = box_least_squares(J, J @ s - g)
        g_new = gradient(s_new)
        value = float(g_new.pow(2).sum())
        if not value < best * (1 - 1e-9):
            break
        s, g, best = s_new, g_new, value
    return min(smooth, math.sqrt(best) / scale), done


class _Scaled(nn.Module):
    """A parameter used outside a matrix product (an elementwise gain)."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 6), nn.Linear(6, 2)
        self.gain = nn.Parameter(torch.linspace(0.5, 1.5, 6))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x) * self.gain))


class _Transposed(nn.Module):
    """A nonlinearity call whose leading axis is not the samples' (rows not separable)."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 6), nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x).T).T)


class _Reshaped(nn.Module):
    """A matrix product over other rows than the samples' (two rows per sample, as a
    convolution applied per frequency): not the factored form."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(4, 6), nn.Linear(6, 2)
        self.mix = nn.Parameter(torch.linspace(-1.0, 1.0, 9).reshape(3, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x))
        h = (h.reshape(-1, 3) @ self.mix).reshape(len(x), 6)
        return self.b(torch.relu(h))


def _leaky(lift: str, n: int = 40):
    data = TeacherConfig(dims=(5, 2, 5), hidden=8, n_train=n, n_test=10).build(seed=0)
    net = LeakyResNetConfig(width=8, depth=5, leak=2.0, init_scale=0.5, lift=lift).build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    return net, torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)


def _fcnn():
    data = TeacherConfig(dims=(5, 2, 5), hidden=8, n_train=40, n_test=10).build(seed=0)
    net = FCNNConfig(depth=3, width=10, slope=0.1).build(
        data.d_in, data.d_out, seed=1, dtype=torch.float64
    )
    return net, torch.as_tensor(data.x_train), torch.as_tensor(data.y_train)


def _module(cls):
    torch.manual_seed(0)
    net = cls().double()
    X = torch.randn(30, 4, dtype=torch.float64)
    return net, X, torch.randn(30, 2, dtype=torch.float64)


def _tau(net: nn.Module, X: torch.Tensor, entries: int) -> float:
    """The kink band that holds `entries` pre-activation entries."""
    rec = KinkMode(1.0)
    with rec:
        getattr(net, "forward_twice_differentiable", net)(X)
    rel = torch.cat([(c.z.abs() / c.z.pow(2).mean().sqrt()).reshape(-1) for c in rec.calls])
    return float(torch.kthvalue(rel, entries).values) * (1 + 1e-9)


NETS = {
    "leaky-resnet": (lambda: _leaky("fixed"), True),
    "leaky-resnet-learned-lift": (lambda: _leaky("learned"), True),
    "fcnn": (_fcnn, True),
    "elementwise-parameter": (lambda: _module(_Scaled), False),
    "rows-not-separable": (lambda: _module(_Transposed), False),
    "product-over-other-rows": (lambda: _module(_Reshaped), False),
}


@pytest.mark.parametrize("entries", [3, 25])
@pytest.mark.parametrize("name", list(NETS))
def test_certificate_equals_the_former_one(name: str, entries: int, monkeypatch) -> None:
    """Same stationarity (to round-off) and rounds as the former implementation, on nets
    with one kink per row and with several along a row's path (`g` not affine); through
    the factored Jacobian where the parameters enter by matrix products only, through
    per-sample gradient columns where they do not."""
    make, factored = NETS[name]
    net, X, Y = make()
    tau = _tau(net, X, entries)
    gram_from_columns = []
    original = cert_module._KinkProblem._columns_gram
    monkeypatch.setattr(
        cert_module._KinkProblem,
        "_columns_gram",
        lambda self, s, c: gram_from_columns.append(1) or original(self, s, c),
    )
    cert = certify(net, (X, Y), 1e-2, tau=tau)
    assert sum(cert.kinks) >= entries
    expected, rounds = _oracle(net, X, Y, 1e-2, tau)
    assert cert.stationarity < cert.smooth_stationarity  # the kinks were used
    assert cert.stationarity == pytest.approx(expected, rel=RTOL)
    assert cert.iterations == rounds
    assert bool(gram_from_columns) is not factored


def test_the_column_route_gives_the_factored_certificate(monkeypatch) -> None:
    """Forcing the per-sample gradient columns on a factorable net changes nothing."""
    net, X, Y = _leaky("learned")
    tau = _tau(net, X, 25)
    factored = certify(net, (X, Y), 1e-2, tau=tau)
    monkeypatch.setattr(cert_module._KinkProblem, "_factors", lambda self, s, c: None)
    monkeypatch.setattr(cert_module, "_RECENT", {})
    columns = certify(net, (X, Y), 1e-2, tau=tau)
    assert columns.stationarity == pytest.approx(factored.stationarity, rel=RTOL)


def test_the_column_route_by_blocks_gives_the_whole_one(monkeypatch) -> None:
    """The Gram matrix of a Jacobian too large to hold (`STORE_BYTES`), built by blocks,
    is the one of the whole Jacobian."""
    net, X, Y = _module(_Scaled)
    tau = _tau(net, X, 25)
    whole = certify(net, (X, Y), 1e-2, tau=tau)
    monkeypatch.setattr(cert_module, "STORE_BYTES", 8 * 7 * 64)  # 4 columns a block
    monkeypatch.setattr(cert_module, "COLUMN_BYTES", 8 * 2 * 64)  # computed 2 at a time
    blocks = certify(net, (X, Y), 1e-2, tau=tau)
    assert blocks.stationarity == pytest.approx(whole.stationarity, rel=RTOL)


def _wide_band(n: int = 40, entries: int = 120):
    """A one-hidden-layer ReLU net (25 parameters; `g` affine in `s`: one call) and a kink
    band that holds `entries` of its `6 n` pre-activation entries, far more than the
    parameter count (as units dead on every sample give, `n` entries each)."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 2, generator=g, dtype=torch.float64)
    Y = torch.randn(n, 1, generator=g, dtype=torch.float64)
    net = FCNNConfig(depth=2, width=6, slope=0.0).build(2, 1, seed=1, dtype=torch.float64)
    return net, X, Y, _tau(net, X, entries)


@pytest.mark.parametrize("route", ["factored", "columns"])
def test_the_matrix_free_round_gives_the_gram_one_where_kinks_outnumber_parameters(
    route: str, monkeypatch
) -> None:
    """With the kink set far above the parameter count (a wide kink band), the
    matrix-free rounds (forced by `GRAM_BYTES = 0`; products from the factors, or by
    backward passes where `J` is not factored) reach the stationarity of the exact
    `J^T J` rounds; they never go below it (their derivatives are feasible: the exact
    minimum of each affine round bounds them from below)."""
    net, X, Y, tau = _wide_band()
    if route == "columns":
        monkeypatch.setattr(cert_module._KinkProblem, "_factors", lambda self, s, c: None)
    P = sum(p.numel() for p in net.parameters())
    dense = certify(net, (X, Y), 1e-2, tau=tau)
    assert sum(dense.kinks) >= 4 * P
    assert dense.stationarity < dense.smooth_stationarity  # the kinks were used
    monkeypatch.setattr(cert_module, "GRAM_BYTES", 0)
    monkeypatch.setattr(cert_module, "_RECENT", {})
    free = certify(net, (X, Y), 1e-2, tau=tau)
    assert free.kinks == dense.kinks
    assert dense.stationarity * (1 - RTOL) <= free.stationarity
    assert free.stationarity == pytest.approx(dense.stationarity, rel=RTOL)
    assert free.iterations == dense.iterations


def test_factors_formed_by_blocks_of_kinks_give_the_whole_ones(monkeypatch) -> None:
    """The factors formed `FACTOR_ROWS` kink entries at a time, the factored form checked
    on a probe of `PROBE` entries per call, give the certificate of the whole kink set."""
    net, X, Y = _leaky("learned")
    tau = _tau(net, X, 25)
    whole = certify(net, (X, Y), 1e-2, tau=tau)
    monkeypatch.setattr(cert_module, "FACTOR_ROWS", 4)
    monkeypatch.setattr(cert_module, "PROBE", 1)
    monkeypatch.setattr(cert_module, "_RECENT", {})
    blocks = certify(net, (X, Y), 1e-2, tau=tau)
    assert blocks.stationarity == pytest.approx(whole.stationarity, rel=RTOL)
    assert blocks.iterations == whole.iterations
