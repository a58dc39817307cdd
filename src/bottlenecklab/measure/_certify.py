"""The convergence certificate of a trained network at ReLU kinks (spec `convergence.md`).

`certify(model, data, lam)` finds the kink set of every ReLU / LeakyReLU call of the
model's forward pass (pre-activations with `|z| <= tau * rms(z)` of that call), and the
smallest generalized gradient of the training objective `F = C + lam R` over the
chain-rule set where the derivative on each kink entry is free in `[a, 1]` (`a` the leaky
slope; the set contains the Clarke subdifferential), relative to the regularization force
`||grad(lam R)||`. Without kinks this is the relative gradient norm.

Nonlinearities are found by intercepting `torch.relu`, `F.relu`, `Tensor.relu` and
`F.leaky_relu` calls (`nn.ReLU` and `nn.LeakyReLU` call them) with a
`TorchFunctionMode`, so any `nn.Module` whose kinks come from those calls is supported; a
model with a hand-written backward exposes `forward_twice_differentiable` (used instead of
`forward`).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.optimize
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

from bottlenecklab.tasks import COSTS, Dataset

__all__ = ["Certificate", "KinkDerivatives", "KinkMode", "certify", "kink_forward"]

TAU = 1e-6  # the kink band in units of the call's rms pre-activation (float64)
THRESHOLD = 1e-2  # default stationarity threshold of a converged network

_RELUS = {torch.relu, F.relu, torch.Tensor.relu, torch.relu_, torch.Tensor.relu_, F.relu_}
_LEAKY = {F.leaky_relu, F.leaky_relu_}


@dataclass(frozen=True)
class KinkDerivatives:
    """The derivatives on the kink set at which the generalized gradient is smallest: the
    chain-rule selection of the (nonsmooth) critical point.

    Args:
        masks: the kink set of each nonlinearity call, in call order (bool, shaped like
            that call's pre-activation `[N, ...]`).
        s: per call, the derivative parameter `s in [0, 1]` of its kink entries (in the
            mask's row-major order; the derivative is `a + s (1 - a)`, `a` the slope).
        tau: the kink band the masks were found with.

    `KinkMode(tau, s, masks)` replays the selection in any forward pass over the same rows
    that makes the same nonlinearity calls (e.g. `LeakyResNet.forward_path`).
    """

    masks: tuple[torch.Tensor, ...]
    s: tuple[torch.Tensor, ...]
    tau: float

    def mode(self) -> KinkMode:
        """A `KinkMode` that applies these derivatives."""
        return KinkMode(self.tau, list(self.s), masks=list(self.masks))


@dataclass(frozen=True)
class Certificate:
    """How close a trained network is to a (nonsmooth) critical point of its loss.

    Args:
        stationarity: `min_s ||g(s)|| / ||grad(lam R)||` over derivatives `s` free on the
            kink set (the absolute norm when `lam = 0`).
        smooth_stationarity: the same with autograd's own derivative at the kinks
            (the relative gradient norm).
        grad_norm: `||grad F||` (autograd); reg_force: `||grad(lam R)||`.
        kinks: kink-set size per nonlinearity call, in call order; entries: their sizes.
        tau: the kink band (`|z| <= tau rms(z)`); threshold: the stationarity threshold.
        iterations: iterations of the minimization over `s` (0 without kinks).
        derivatives: the minimizing derivatives on the kink set (`KinkDerivatives`; with
            no kink, autograd's): the momenta of the critical point are computed with them.
    """

    stationarity: float
    smooth_stationarity: float
    grad_norm: float
    reg_force: float
    kinks: tuple[int, ...]
    entries: tuple[int, ...]
    tau: float
    threshold: float
    iterations: int
    derivatives: KinkDerivatives | None = field(default=None, compare=False, repr=False)

    @property
    def converged(self) -> bool:
        """`stationarity <= threshold` (and finite)."""
        return math.isfinite(self.stationarity) and self.stationarity <= self.threshold

    def scalars(self, prefix: str = "cert_") -> dict[str, float]:
        """The record as flat scalars (a run's summary row)."""
        return {
            f"{prefix}stationarity": self.stationarity,
            f"{prefix}smooth_stationarity": self.smooth_stationarity,
            f"{prefix}grad_norm": self.grad_norm,
            f"{prefix}reg_force": self.reg_force,
            f"{prefix}kinks": float(sum(self.kinks)),
            f"{prefix}kink_fraction": float(sum(self.kinks)) / max(1, sum(self.entries)),
            f"{prefix}iterations": float(self.iterations),
        }


@dataclass
class _Call:
    z: torch.Tensor  # detached pre-activation
    slope: float  # derivative for z < 0
    mask: torch.Tensor  # kink set of this call (bool, like z)


class KinkMode(TorchFunctionMode):
    """Intercepts ReLU / LeakyReLU calls: records their pre-activations and kink sets, and
    (when `s` is given) replaces the derivative on the kink entries by `a + s (1 - a)`.

    Args:
        tau: kink band; s: one tensor per call (its kink entries, in order), or None
            (record only, autograd's derivative everywhere).
        masks: the kink sets, one per call, when known (e.g. for a subset of the rows of
            the batch they were found on); else each call finds its own.
    """

    def __init__(
        self,
        tau: float = TAU,
        s: Sequence[torch.Tensor] | None = None,
        masks: Sequence[torch.Tensor] | None = None,
    ) -> None:
        super().__init__()
        self.tau = tau
        self.s = s
        self.masks = masks
        self.calls: list[_Call] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _RELUS:
            slope = 0.0
        elif func in _LEAKY:
            slope = float(args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01))
        else:
            return func(*args, **kwargs)
        z = args[0]
        value = torch.where(z > 0, z, slope * z)  # the activation's value (not in place)
        zd = z.detach()
        i = len(self.calls)
        if self.masks is not None:
            mask = self.masks[i]
        else:
            mask = zd.abs() <= self.tau * zd.pow(2).mean().sqrt()
        self.calls.append(_Call(zd, slope, mask))
        if self.s is None:
            return value
        d = torch.where(zd > 0, 1.0, slope).to(z.dtype)  # [same as z]
        free = torch.zeros_like(zd).masked_scatter(mask, self.s[i])
        d = torch.where(mask, slope + free * (1.0 - slope), d)
        return value.detach() + d * (z - zd)


def kink_forward(model: torch.nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """The forward pass the certificate differentiates: `forward_twice_differentiable`
    where the model has one (a fused stack with a hand-written backward), else `model`."""
    return getattr(model, "forward_twice_differentiable", model)


def _regularization(model: Any, lam: float) -> torch.Tensor:
    reg = getattr(model, "regularization", None)
    if reg is not None:
        return reg(lam)
    return lam * sum(p.pow(2).sum() for p in model.parameters() if p.requires_grad)


def _as_xy(data: Dataset | tuple[Any, Any], dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    X, Y = (data.x_train, data.y_train) if isinstance(data, Dataset) else data
    return (
        torch.as_tensor(np.asarray(X) if not torch.is_tensor(X) else X).to(device, dtype),
        torch.as_tensor(np.asarray(Y) if not torch.is_tensor(Y) else Y).to(device, dtype),
    )


def certify(
    model: torch.nn.Module,
    data: Dataset | tuple[Any, Any],
    lam: float,
    *,
    cost: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "mse",
    tau: float = TAU,
    threshold: float = THRESHOLD,
    max_iter: int = 200,
    device: str | None = None,
) -> Certificate:
    """The convergence certificate of `model` on its training data (spec `convergence.md`).

    Args:
        model: any `nn.Module` mapping `X` `[N, ...]` to `Y_hat`; its loss is
            `C(Y_hat, Y) + model.regularization(lam)` (or `lam ||theta||^2` when the model
            has no `regularization`). Not modified: a float64 copy is used.
        data: a `Dataset` (its training split) or `(X, Y)`.
        lam: the weight decay of the training objective.
        cost: a name in `tasks.COSTS` or a function `(Y_hat, Y) -> scalar`.
        tau: the kink band, relative to each call's rms pre-activation.
        threshold: stationarity at or below which the network counts as converged.
        max_iter: iterations of L-BFGS-B over the free derivatives `s in [0, 1]^K`.
        device: where to compute (default: the model's device).

    A pure function of its inputs: for the library's models the last few results are kept,
    keyed by a digest of the model's class, config, parameters and buffers, the data and
    the settings, so measuring a network twice (its layer table and its claims' gate)
    computes the certificate once.
    """
    first = next(iter(model.parameters()), None)
    device = device or (first.device if first is not None else "cpu")
    key = _digest(model, data, lam, cost, tau, max_iter, device)
    if key is not None and key in _RECENT:  # the threshold only sets the verdict
        return dataclasses.replace(_RECENT[key], threshold=threshold)
    cert = _certify(model, data, lam, cost, tau, threshold, max_iter, device)
    if key is not None:
        _RECENT[key] = cert
        while len(_RECENT) > 4:
            _RECENT.pop(next(iter(_RECENT)))
    return cert


_RECENT: dict[str, Certificate] = {}


def _digest(model, data, lam, cost, tau, max_iter, device) -> str | None:
    """A digest of everything `certify` depends on, or None (no caching) when `cost` is a
    function or the model is not one of ours: only a model whose `cfg` holds every
    setting besides its parameters and buffers can be identified by them."""
    cfg = getattr(model, "cfg", None)
    if not isinstance(cost, str) or not dataclasses.is_dataclass(cfg):
        return None
    h = hashlib.sha256()
    h.update(repr((type(model).__qualname__, cfg, lam, cost, tau, max_iter)).encode())
    h.update(str(device).encode())
    X, Y = (data.x_train, data.y_train) if isinstance(data, Dataset) else data
    tensors = [*model.state_dict().values(), X, Y]
    for t in tensors:
        a = t.detach().cpu().numpy() if torch.is_tensor(t) else np.asarray(t)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _certify(model, data, lam, cost, tau, threshold, max_iter, device) -> Certificate:
    net = copy.deepcopy(model).to(device=device, dtype=torch.float64)
    X, Y = _as_xy(data, torch.float64, device)
    params = [p for p in net.parameters() if p.requires_grad]
    cost_fn = COSTS[cost] if isinstance(cost, str) else cost
    forward = kink_forward(net)

    reg_grads = torch.autograd.grad(_regularization(net, lam), params, allow_unused=True)
    reg_force = _norm(reg_grads)
    scale = reg_force if lam > 0 and reg_force > 0 else 1.0

    recorder = KinkMode(tau)
    with recorder:
        loss = cost_fn(forward(X), Y) + _regularization(net, lam)
    grad_norm = _norm(torch.autograd.grad(loss, params, allow_unused=True))
    calls = recorder.calls
    kinks = tuple(int(c.mask.sum()) for c in calls)
    entries = tuple(int(c.z.numel()) for c in calls)
    smooth = grad_norm / scale
    best, iters = smooth, 0
    s_best = [(c.z[c.mask] > 0).to(X.dtype) for c in calls]  # autograd's derivative
    if sum(kinks):
        value, iters, s_min = _min_generalized_gradient(
            net, forward, cost_fn, X, Y, lam, calls, max_iter
        )
        if math.sqrt(max(value, 0.0)) / scale < smooth:
            best, s_best = math.sqrt(max(value, 0.0)) / scale, s_min
    return Certificate(
        stationarity=best,
        smooth_stationarity=smooth,
        grad_norm=grad_norm,
        reg_force=reg_force,
        kinks=kinks,
        entries=entries,
        tau=tau,
        threshold=threshold,
        iterations=iters,
        derivatives=KinkDerivatives(
            masks=tuple(c.mask for c in calls),
            s=tuple(t.detach() for t in s_best),
            tau=tau,
        ),
    )


def _min_generalized_gradient(net, forward, cost_fn, X, Y, lam, calls, max_iter):
    """`min_s ||g(s)||^2` with the derivative free on the kink set; `(value, iterations,
    s)`, `s` one tensor per call (its kink entries, in the mask's order).

    The cost is a mean over samples and the forward pass treats samples independently, so
    the gradient splits into the rows with a kink (recomputed for each `s`) and all the
    others (computed once): each evaluation costs a pass over the kinked rows only.
    """
    params = [p for p in net.parameters() if p.requires_grad]
    n = len(X)
    hit = torch.zeros(n, dtype=torch.bool, device=X.device)
    for c in calls:
        if c.z.dim() >= 1 and c.z.shape[0] == n:
            hit |= c.mask.reshape(n, -1).any(1)
        else:  # a call whose rows are not the samples: keep every row
            hit[:] = True
    rows, rest = hit.nonzero().squeeze(1), (~hit).nonzero().squeeze(1)
    k = len(rows)
    fixed = _regularization(net, lam)
    if len(rest):  # no kink in these rows: autograd's derivative is the only one
        fixed = fixed + cost_fn(forward(X[rest]), Y[rest]) * (len(rest) / n)
    g_fixed = [
        torch.zeros_like(p) if g is None else g.detach()
        for p, g in zip(params, torch.autograd.grad(fixed, params, allow_unused=True))
    ]
    masks = [c.mask[rows] for c in calls]
    s0 = [(c.z[rows][m] > 0).to(X.dtype) for c, m in zip(calls, masks)]
    sizes = [int(t.numel()) for t in s0]

    def gradient(flat: torch.Tensor, graph: bool = False) -> torch.Tensor:
        with KinkMode(TAU, list(torch.split(flat, sizes)), masks=masks):
            F_s = cost_fn(forward(X[rows]), Y[rows]) * (k / n)
        g = torch.autograd.grad(F_s, params, create_graph=graph, allow_unused=True)
        return torch.cat(
            [(gf + gi if gi is not None else gf).reshape(-1) for gf, gi in zip(g_fixed, g)]
        )

    flat0 = torch.cat(s0)
    if len(flat0) <= MAX_EXACT:
        value, iters, flat = _box_gauss_newton(gradient, flat0)
        return value, iters, list(torch.split(flat, sizes))

    def objective(s: list[torch.Tensor]) -> torch.Tensor:
        return gradient(torch.cat(s), graph=True).pow(2).sum()

    return minimize_box(objective, s0, max_iter)


MAX_EXACT = 512  # kink entries up to which the Jacobian in s is formed column by column


def _box_gauss_newton(
    gradient, s: torch.Tensor, rounds: int = 8
) -> tuple[float, int, torch.Tensor]:
    """`min ||g(s)||^2` over `s in [0, 1]^K` for `g` affine in each coordinate of `s`.

    Each coordinate enters the chain rule once, so a column of the Jacobian is the exact
    difference `g(s + e_k) - g(s)`; the box-constrained linear least-squares problem is
    solved exactly (`box_least_squares`) and re-linearized where kinks interact
    (several kinks along one sample's path). Returns the smallest `||g||^2` evaluated, the
    number of rounds and the `s` that gave it.
    """
    g = gradient(s).detach()
    best = float(g.pow(2).sum())
    done = 0
    while done < rounds:
        done += 1
        cols = []
        for i in range(len(s)):
            e = s.clone()
            e[i] += 1.0 if s[i] < 0.5 else -1.0
            cols.append((gradient(e).detach() - g) * (1.0 if s[i] < 0.5 else -1.0))
        J = torch.stack(cols, 1)  # [P, K]
        s_new = box_least_squares(J, J @ s - g).to(s.device)
        g_new = gradient(s_new).detach()
        value = float(g_new.pow(2).sum())
        if not value < best * (1 - 1e-9):
            break
        s, g, best = s_new, g_new, value
    return best, done, s


def box_least_squares(J: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """`argmin ||J s - target||` over `s in [0, 1]^K`, exactly (`J` `[P, K]`, `P >= K`
    typically, `target` `[P]`; returns `[K]` float64 on the CPU).

    A reduced QR `J = Q R` turns it into the `K x K` problem `min ||R s - Q^T target||`
    (same minimizers), which bounded-variable least squares (`scipy`'s `bvls`) solves
    without touching the `P` rows again.
    """
    J, target = J.detach().to("cpu", torch.float64), target.detach().to("cpu", torch.float64)
    if J.shape[0] > J.shape[1]:
        Q, R = torch.linalg.qr(J)  # [P, K], [K, K]
        J, target = R, Q.T @ target
    sol = scipy.optimize.lsq_linear(J.numpy(), target.numpy(), bounds=(0.0, 1.0), method="bvls")
    return torch.as_tensor(sol.x, dtype=torch.float64).clamp(0.0, 1.0)


def minimize_box(
    objective: Callable[[list[torch.Tensor]], torch.Tensor],
    s0: list[torch.Tensor],
    max_iter: int,
) -> tuple[float, int, list[torch.Tensor]]:
    """`min objective(s)` over `s in [0, 1]` (L-BFGS-B on the concatenated vector).

    `objective` maps a list of tensors shaped like `s0` to a differentiable scalar.
    Returns the smallest value evaluated (every evaluated `s` is feasible), the iteration
    count and the `s` that gave it (shaped like `s0`).
    """
    sizes = [int(t.numel()) for t in s0]
    device = s0[0].device if s0 else "cpu"
    best = [math.inf]
    arg = [None]
    scale = [0.0]  # the first value: L-BFGS-B's stopping rule is absolute below 1

    def fun(v: np.ndarray) -> tuple[float, np.ndarray]:
        flat = torch.tensor(v, dtype=torch.float64, device=device, requires_grad=True)
        parts = list(torch.split(flat, sizes))
        val = objective(parts)
        (grad,) = torch.autograd.grad(val, flat, allow_unused=True)
        f = float(val.detach())
        if f < best[0]:
            best[0], arg[0] = f, v.copy()
        if scale[0] == 0.0:
            scale[0] = f if f > 0 else 1.0
        g = np.zeros_like(v) if grad is None else grad.detach().cpu().numpy()
        return f / scale[0], g / scale[0]

    x0 = torch.cat([t.reshape(-1) for t in s0]).cpu().numpy()
    res = scipy.optimize.minimize(
        fun,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, 1.0)] * len(x0),
        options={"maxiter": max_iter, "ftol": 1e-12, "gtol": 1e-12},
    )
    flat = torch.as_tensor(arg[0] if arg[0] is not None else x0, dtype=torch.float64)
    parts = [t.reshape(s.shape) for t, s in zip(torch.split(flat.to(device), sizes), s0)]
    return best[0], int(res.nit), parts


def _norm(grads: Sequence[torch.Tensor | None]) -> float:
    return math.sqrt(sum(float(g.pow(2).sum()) for g in grads if g is not None))
