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

The minimization over the kink derivatives is box Gauss-Newton on exact linearizations
(`_KinkProblem`); its Jacobian costs about one backward pass over the kinked rows where
the parameters enter by matrix products, so a paper-size certificate takes about as long
as a few full-batch gradients (`python -m benchmarks certificate-cost`). Where the kink set
is so large that its `K x K` Gram matrix would pass `GRAM_BYTES` (e.g. units that are
kinks on every sample: `N` entries each, `K` far above the parameter count), each round
is solved matrix-free instead (L-BFGS-B on products with `J` and `J^T`): memory `O(K + P)`
besides the factors, and the derivatives found stay feasible, so the stationarity is still
the norm of a generalized gradient that exists.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
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
        """The record as flat scalars (the probe's summary; an experiment's point keeps
        it typed, `experiments._record.CertificateRecord`)."""
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
        slope = _slope(func, args, kwargs)
        if slope is None:
            return func(*args, **kwargs)
        z = args[0]
        # the activation's value, not in place (derivative `slope` at `z = 0`, as `where`'s)
        value = torch.relu(z) if slope == 0.0 else F.leaky_relu(z, slope)
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
    max_iter: int = 8,
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
        max_iter: at most this many box Gauss-Newton rounds over the free derivatives
            `s in [0, 1]^K` (each solves its linearized problem exactly).
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

    reg_grads = _flat(
        params, torch.autograd.grad(_regularization(net, lam), params, allow_unused=True)
    )
    reg_force = float(reg_grads.norm())
    scale = reg_force if lam > 0 and reg_force > 0 else 1.0

    recorder = KinkMode(tau)
    with recorder:
        loss = cost_fn(forward(X), Y) + _regularization(net, lam)
    g_full = _flat(params, torch.autograd.grad(loss, params, allow_unused=True))
    grad_norm = float(g_full.norm())
    calls = recorder.calls
    kinks = tuple(int(c.mask.sum()) for c in calls)
    entries = tuple(int(c.z.numel()) for c in calls)
    smooth = grad_norm / scale
    best, iters = smooth, 0
    s_best = [(c.z[c.mask] > 0).to(X.dtype) for c in calls]  # autograd's derivative
    if sum(kinks):
        problem = _KinkProblem(net, forward, cost_fn, X, Y, calls, g_full, reg_grads)
        value, iters, s_min = problem.minimize(max_iter)
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


class _Chosen(TorchFunctionMode):
    """Applies given derivatives `d` (one tensor per nonlinearity call, shaped like its
    pre-activation) and keeps each call's pre-activation `z` and output in the graph.

    With `params`, it also records every matrix product whose matrix operand is a view of
    one of them (`_Product`): the factors of the per-sample gradients of those parameters.
    `factored` turns False when a product does not fit that form (then nothing recorded
    may be used).
    """

    def __init__(
        self, d: Sequence[torch.Tensor], params: Sequence[torch.Tensor] | None = None
    ) -> None:
        super().__init__()
        self.d = d
        self.z: list[torch.Tensor] = []
        self.out: list[torch.Tensor] = []
        self.products: list[_Product] = []
        self.factored = params is not None
        self._scaled: dict[int, tuple[torch.Tensor, int, torch.Tensor, float]] = {}
        self._owner = {
            p.untyped_storage().data_ptr(): i for i, p in enumerate(params or ()) if p.numel()
        }

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        slope = _slope(func, args, kwargs)
        if slope is None:
            out = func(*args, **kwargs)
            if self._owner and func in _PRODUCTS:
                self._record(func, args, kwargs, out)
            elif self._owner and func in _SCALINGS and not kwargs:
                self._scaling(args, out)
            return out
        z = args[0]
        value = torch.where(z > 0, z, slope * z)
        out = value.detach() + self.d[len(self.z)] * (z - z.detach())
        self.z.append(z)
        self.out.append(out)
        return out

    def _param(self, t: Any) -> tuple[int, torch.Tensor, float] | None:
        """`(parameter index, view, scale)` when `t` is `scale` times a view of a
        parameter (scale 1: the view itself), else None."""
        if not torch.is_tensor(t) or not t.requires_grad or t.numel() == 0:
            return None
        if id(t) in self._scaled:
            return self._scaled[id(t)][1:]
        i = self._owner.get(t.untyped_storage().data_ptr())
        return None if i is None else (i, t, 1.0)

    def _scaling(self, args, out) -> None:
        """Record `out = a * view` for a number `a` (e.g. a bias scale)."""
        if len(args) != 2:
            return
        for t, a in (args, args[::-1]):
            source = self._param(t)
            if source is not None and isinstance(a, (int, float)) and not isinstance(a, bool):
                i, view, scale = source
                self._scaled[id(out)] = (out, i, view, scale * float(a))
                return

    def _record(self, func, args, kwargs, out) -> None:
        names = {
            torch.addmm: ("input", "mat1", "mat2"),
            torch.Tensor.addmm: ("self", "mat1", "mat2"),
            F.linear: ("input", "weight", "bias"),
        }
        bound = dict(zip(names.get(func, ("input", "other")), args)) | kwargs
        if func in (torch.addmm, torch.Tensor.addmm):
            x, M, b, transposed = bound.get("mat1"), bound.get("mat2"), bound.get("input"), False
            if bound.get("beta", 1) != 1 or bound.get("alpha", 1) != 1:
                b = M = x = None  # scaled products are not recorded: refuse below
        elif func is F.linear:
            x, M, b, transposed = bound.get("input"), bound.get("weight"), bound.get("bias"), True
        else:  # x @ M
            x, M, b, transposed = args[0], args[1], None, False
        if b is not None and not (torch.is_tensor(b) and b.requires_grad):
            b = None  # a constant bias uses no parameter
        if M is None or x is None:
            self.factored = False
            return
        pm, pb = self._param(M), (self._param(b) if b is not None else None)
        if pm is None and pb is None and self._param(x) is None:
            return  # no parameter is used directly by this product
        ok = (
            pm is not None
            and self._param(x) is None
            and x.dim() == 2
            and M.dim() == 2
            and out.dim() == 2
            and (b is None or (pb is not None and b.dim() == 1))
        )
        if not ok:
            self.factored = False
            return
        self.products.append(_Product(x.detach(), out, pm, transposed, pb))


@dataclass
class _Product:
    """`out = x M + b` (`x M^T + b` when `transposed`), `M` and `b` scaled views of
    parameters (`(index, view, scale)`; `b` may be None): the gradient of the view of `M`
    for sample `i` is `scale x_i^T delta_i`."""

    x: torch.Tensor  # [K, in]
    out: torch.Tensor  # [K, out]
    pm: tuple[int, torch.Tensor, float]
    transposed: bool
    pb: tuple[int, torch.Tensor, float] | None


_SCALINGS = {torch.mul, torch.Tensor.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__}
_PRODUCTS = {
    torch.addmm,
    torch.Tensor.addmm,
    F.linear,
    torch.mm,
    torch.Tensor.mm,
    torch.matmul,
    torch.Tensor.matmul,
    torch.Tensor.__matmul__,
}


class _Forward(torch.nn.Module):
    """`kink_forward(net)` as a module's `forward` (for `torch.func.functional_call`)."""

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return kink_forward(self.net)(x)


COLUMN_BYTES = 2**26  # memory of the Jacobian columns computed at once (one vmap)
STORE_BYTES = 2**30  # up to this size the Jacobian is kept whole; beyond, its Gram by blocks
FACTOR_ROWS = 4096  # kink entries whose rows are copied at once to form the factors
PROBE = 16  # kink entries per call on which the factored form is checked
GRAM_BYTES = 2**28  # the factored `J^T J` `[K, K]` is formed up to this size; beyond, matrix-free
GRAM_BLOCK_BYTES = 2**25  # a block of rows of `J^T J` formed at once
MATRIX_FREE_ITER = 50  # L-BFGS-B iterations of one matrix-free round (tripoints deep: 6 CPU s)


class _KinkProblem:
    """`min ||g(s)||^2` over the derivatives `s in [0, 1]^K` on the kink set.

    The generalized gradient is `g(s) = g_fixed + grad_theta F_rows(s)`, `F_rows` the cost
    over the rows with a kink (the cost is a mean over samples and the forward pass treats
    samples independently), `g_fixed` all the rest (computed once, from the full
    gradient). A kink entry `i` enters the backward pass once: its derivative multiplies
    the adjoint `u_i` of its output, so `dg/ds_i = (1 - a_i) u_i grad_theta z_i` (`z_i`
    its pre-activation, `a_i` the slope), exactly: the columns of `J = dg/ds` `[P, K]`
    are per-sample gradients, and only `J^T J` `[K, K]` and `J^T g` are needed. Where the
    parameters enter the forward pass by matrix products only (`nn.Linear`, the leaky
    ResNet's layers), `J^T J` comes from one backward pass over one copy of each kink's
    row (`_factors`); otherwise from the columns themselves (`torch.func.vmap` of
    per-sample gradients, `_columns_gram`). `J^T v` for any `v` is two backward passes
    over the kinked rows (`_transposed`). `g` is affine in each coordinate, and jointly
    affine unless one row has kink entries in two calls (then `u` or `grad z` of one
    depends on the other's `s`, and each Gauss-Newton round recomputes `J`).
    """

    def __init__(self, net, forward, cost_fn, X, Y, calls, g_full, g_reg) -> None:
        self.net, self.forward, self.cost_fn = net, forward, cost_fn
        self.names = [n for n, p in net.named_parameters() if p.requires_grad]
        self.params = [p for p in net.parameters() if p.requires_grad]
        n = len(X)
        # Rows are samples when every call's leading axis is the batch; else all rows are
        # kept together and a column's backward pass runs over all of them.
        self.separable = all(c.z.dim() >= 1 and c.z.shape[0] == n for c in calls)
        hit = torch.zeros(n, dtype=torch.bool, device=X.device)
        if self.separable:
            for c in calls:
                hit |= c.mask.reshape(n, -1).any(1)
        else:
            hit[:] = True
        self.rows = hit.nonzero().squeeze(1)
        k = len(self.rows)
        self.X, self.Y, self.weight = X[self.rows], Y[self.rows], k / n
        sel = (lambda t: t[self.rows]) if self.separable else (lambda t: t)
        self.z = [sel(c.z) for c in calls]
        self.masks = [sel(c.mask) for c in calls]
        self.slopes = [c.slope for c in calls]
        self.sizes = [int(m.sum()) for m in self.masks]
        self.s0 = torch.cat([z[m] > 0 for z, m in zip(self.z, self.masks)]).to(X.dtype)
        # the kink entries' (row in self.X, call, position in the call's row)
        self.kink_rows = torch.cat([m.reshape(len(m), -1).nonzero()[:, 0] for m in self.masks])
        self.kink_calls = torch.cat(
            [
                torch.full((s,), i, dtype=torch.long, device=X.device)
                for i, s in enumerate(self.sizes)
            ]
        )
        self.kink_flat = torch.cat([m.reshape(len(m), -1).nonzero()[:, 1] for m in self.masks])
        calls_per_row = torch.zeros(len(self.X), len(calls), dtype=torch.bool)
        calls_per_row[self.kink_rows.cpu(), self.kink_calls.cpu()] = True
        self.affine = bool(self.separable and (calls_per_row.sum(1) <= 1).all())
        raw, u = self._rows_gradient(self.s0)
        self._start = (raw, u)
        self.g_fixed = g_full - raw if k < n else g_reg  # exact: no row without a kink
        self._factorable: bool | None = None  # unknown until the first Jacobian

    def _derivatives(self, s: torch.Tensor) -> list[torch.Tensor]:
        """The derivative of every entry of every call (kink entries from `s`)."""
        out = []
        for z, m, a, si in zip(self.z, self.masks, self.slopes, torch.split(s, self.sizes)):
            d = torch.where(z > 0, 1.0, a).to(z.dtype)
            free = torch.zeros_like(z).masked_scatter(m, si)
            out.append(torch.where(m, a + free * (1.0 - a), d))
        return out

    def _rows_gradient(self, s: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """`grad_theta F_rows(s)` `[P]` and the adjoints of the calls' outputs (per call)."""
        mode = _Chosen(self._derivatives(s))
        with mode:
            F_rows = self.cost_fn(self.forward(self.X), self.Y) * self.weight
        # an output that does not depend on the parameters has `grad z = 0`: no adjoint needed
        live = [o for o in mode.out if o.requires_grad]
        grads = torch.autograd.grad(F_rows, [*self.params, *live], allow_unused=True)
        P = len(self.params)
        adjoint = iter(grads[P:])
        u = [(next(adjoint) if o.requires_grad else None) for o in mode.out]
        u = [torch.zeros_like(o) if a is None else a for o, a in zip(mode.out, u)]
        return _flat(self.params, grads[:P]), u

    def _coefficients(self, u: list[torch.Tensor]) -> torch.Tensor:
        """`(1 - a_i) u_i` of every kink entry `[K]`: `dg/ds_i = c_i grad_theta z_i`."""
        return torch.cat([(1.0 - a) * ui[m] for ui, m, a in zip(u, self.masks, self.slopes)])

    def _transposed(self, s: torch.Tensor, c: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """`J^T v` `[K]` for `v` `[P]`: `c * (grad_theta z_K) v`, by differentiating
        `<grad_theta (w . z_K), v>` in the kink weights `w` (two backward passes)."""
        mode = _Chosen(self._derivatives(s))
        with mode:
            self.forward(self.X)
        w = [torch.zeros_like(z, requires_grad=True) for z in mode.z]
        live = [(wi, z) for wi, z in zip(w, mode.z) if z.requires_grad]
        if not live:
            return torch.zeros_like(c)
        total = sum((wi * z).sum() for wi, z in live)
        q = torch.autograd.grad(total, self.params, create_graph=True, allow_unused=True)
        inner = sum((qi * vi).sum() for qi, vi in zip(q, _unflat(self.params, v)) if qi is not None)
        if not torch.is_tensor(inner) or not inner.requires_grad:
            return torch.zeros_like(c)
        dz = torch.autograd.grad(inner, [wi for wi, _ in live], allow_unused=True)
        tangents = iter(dz)
        parts = []
        for z, m in zip(mode.z, self.masks):
            t = next(tangents) if z.requires_grad else None
            parts.append((torch.zeros_like(z) if t is None else t)[m])
        return c * torch.cat(parts)

    def _column_blocks(self, s: torch.Tensor, c: torch.Tensor, idx: torch.Tensor):
        """The Jacobian columns `idx`, as blocks `[B, P]` (per-sample gradients)."""
        d = self._derivatives(s)
        module = _Forward(self.net)
        primals = {f"net.{n}": p.detach() for n, p in zip(self.names, self.params)}

        def weighted_kinks(p, x, d_row, onehot):
            mode = _Chosen(d_row)
            with mode:
                torch.func.functional_call(module, p, (x,))
            return sum((w * z).sum() for w, z in zip(onehot, mode.z))

        per_kink = torch.func.vmap(
            torch.func.grad(weighted_kinks),
            in_dims=(None, 0, 0, 0) if self.separable else (None, None, None, 0),
        )
        P = sum(p.numel() for p in self.params)
        step = max(1, COLUMN_BYTES // (8 * P))
        for lo in range(0, len(idx), step):
            b = idx[lo : lo + step]
            r, call, pos = self.kink_rows[b], self.kink_calls[b], self.kink_flat[b]
            if self.separable:  # each kink's own row: [B, 1, ...]
                x = self.X[r].unsqueeze(1)
                d_rows = [t[r].unsqueeze(1) for t in d]
                shapes = [(len(b), 1, *t.shape[1:]) for t in d]
                rr = torch.zeros_like(r)
            else:
                x, d_rows = self.X, d
                shapes = [(len(b), *t.shape) for t in d]
                rr = r
            onehot = [torch.zeros(sh, dtype=self.X.dtype, device=self.X.device) for sh in shapes]
            for j in range(len(b)):
                w = onehot[int(call[j])]
                w[j].view(w.shape[1], -1)[rr[j], pos[j]] = c[b[j]]
            grads = per_kink(primals, x, d_rows, onehot)
            yield torch.cat([grads[f"net.{n}"].reshape(len(b), -1) for n in self.names], 1)

    def _factors(self, s: torch.Tensor, c: torch.Tensor) -> list[_Factor] | None:
        """The per-sample gradient factors of the Jacobian's columns, or None where the
        model's parameters are not all used by recorded matrix products (`_Chosen`).

        Each kink entry is given its own copy of its row, so one backward pass from
        `sum_i c_i z_i` gives every column's output adjoint `delta_i` at every product
        `x M`: the gradient of `M` in column `i` is `x_i^T delta_i` (and `delta_i` for a
        bias). The copies are made `FACTOR_ROWS` kink entries at a time. Whether these
        products hold every use of the parameters is checked once, on a probe of up to
        `PROBE` kink entries of every call: `J^T v` for a fixed random `v` against
        `_transposed`, before any factor of the whole kink set is formed.
        """
        if self._factorable is False:
            return None
        storages = {p.untyped_storage().data_ptr() for p in self.params if p.numel()}
        if not self.separable or len(storages) < sum(1 for p in self.params if p.numel()):
            self._factorable = False  # (parameters sharing a storage are not told apart)
            return None
        K = len(s)
        if self._factorable is None:
            probe = (
                torch.cat(
                    [
                        (self.kink_calls == j).nonzero().squeeze(1)[:PROBE]
                        for j in range(len(self.z))
                    ]
                )
                .sort()
                .values
            )
            part = self._factor_rows(s, c, probe, check=True)
            if part is None:
                self._factorable = False
                return None
            v = torch.randn(
                sum(p.numel() for p in self.params),
                generator=torch.Generator().manual_seed(0),
                dtype=s.dtype,
            ).to(s.device)
            exact = self._transposed(s, c, v)[probe]
            self._factorable = bool(
                (self._factored_transposed(part, v, len(probe)) - exact).norm()
                <= 1e-8 * exact.norm()
            )
            if not self._factorable:
                return None
            if len(probe) == K:
                return part
        parts = [
            self._factor_rows(s, c, torch.arange(lo, min(lo + FACTOR_ROWS, K), device=s.device))
            for lo in range(0, K, FACTOR_ROWS)
        ]
        if any(p is None for p in parts):
            self._factorable = False
            return None
        return [
            _Factor(
                torch.cat([p[i].x for p in parts]), torch.cat([p[i].delta for p in parts]), f.M, f.b
            )
            for i, f in enumerate(parts[0])
        ]

    def _factor_rows(
        self, s: torch.Tensor, c: torch.Tensor, idx: torch.Tensor, check: bool = False
    ) -> list[_Factor] | None:
        """The factors of the kink entries `idx` (one per recorded product, in the order
        of the forward pass; a product no kink of `idx` depends on has `delta = 0`), or
        None where the forward pass does not fit the factored form (`check`: also where
        a parameter entry is used by two products)."""
        n = len(idx)
        r, call, pos = self.kink_rows[idx], self.kink_calls[idx], self.kink_flat[idx]
        mode = _Chosen([t[r] for t in self._derivatives(s)], self.params)
        with mode:
            self.forward(self.X[r])
        if not mode.factored or len(mode.z) != len(self.z):
            return None
        if any(q.x.shape[0] != n or q.out.shape[0] != n for q in mode.products):
            return None  # a product over other rows than the kinks' copies (e.g. per frequency)
        views = []
        for q in mode.products:
            (im, vm, sm), pb = q.pm, q.pb
            M = _Strided.of(vm.T if q.transposed else vm, self.params[im], im, sm)  # [in, out]
            b = None if pb is None else _Strided.of(pb[1], self.params[pb[0]], pb[0], pb[2])
            views.append((q, M, b))
        if check:  # each parameter entry in one product at most
            uses = [torch.zeros(p.numel(), dtype=torch.int32, device=p.device) for p in self.params]
            for _, M, b in views:
                M.count(uses[M.param])
                if b is not None:
                    b.count(uses[b.param])
            if any(bool((u > 1).any()) for u in uses):
                return None
        weights = [torch.zeros_like(z) for z in mode.z]
        rows = torch.arange(n, device=r.device)
        for j, w in enumerate(weights):
            sel = call == j
            if sel.any():
                w.view(n, -1)[rows[sel], pos[sel]] = c[idx][sel]
        live = [(w * z).sum() for w, z in zip(weights, mode.z) if z.requires_grad]
        outs = [q.out for q, _, _ in views if q.out.requires_grad]
        grads = iter(
            torch.autograd.grad(sum(live), outs, allow_unused=True)
            if live and outs
            else [None] * len(outs)
        )
        factors = []
        for q, M, b in views:
            delta = next(grads) if q.out.requires_grad else None
            delta = torch.zeros_like(q.out) if delta is None else delta
            factors.append(_Factor(q.x, delta.detach(), M, b))
        return factors

    def _factored_transposed(
        self, factors: list[_Factor], v: torch.Tensor, n: int | None = None
    ) -> torch.Tensor:
        """`J^T v` `[n]` from the factors of `n` kink entries (default: all of them):
        `sum (x_i^T v_M delta_i + v_b . delta_i)`."""
        parts = _unflat(self.params, v)
        out = torch.zeros(len(self.kink_rows) if n is None else n, dtype=v.dtype, device=v.device)
        for f in factors:
            out += f.M.scale * ((f.x @ f.M.view(parts[f.M.param])) * f.delta).sum(1)
            if f.b is not None:
                out += f.b.scale * (f.delta * f.b.view(parts[f.b.param])).sum(1)
        return out

    @staticmethod
    def _factored_gram(factors: list[_Factor], K: int, like: torch.Tensor) -> torch.Tensor:
        """`J^T J` `[K, K]` from the factors: `sum (x_i . x_j)(delta_i . delta_j)`, by
        blocks of rows (`GRAM_BLOCK_BYTES` per temporary)."""
        G = torch.zeros(K, K, dtype=like.dtype, device=like.device)
        size = max(1, GRAM_BLOCK_BYTES // (8 * K))
        for lo in range(0, K, size):
            rows = G[lo : lo + size]
            for f in factors:
                dd = f.delta[lo : lo + size] @ f.delta.T
                rows.addcmul_(f.x[lo : lo + size] @ f.x.T, dd, value=f.M.scale**2)
                if f.b is not None:
                    rows.add_(dd, alpha=f.b.scale**2)
        return G

    def _factored_product(self, factors: list[_Factor], v: torch.Tensor) -> torch.Tensor:
        """`J v` `[P]` for `v` `[K]` from the factors: `sum v_i (x_i^T delta_i)` at each
        product's parameter entries (and `sum v_i delta_i` at its bias)."""
        parts = [torch.zeros_like(p) for p in self.params]
        for f in factors:
            f.M.add_to(parts[f.M.param], f.M.scale * (f.x.T @ (v[:, None] * f.delta)))
            if f.b is not None:
                f.b.add_to(parts[f.b.param], f.b.scale * (f.delta.T @ v))
        return torch.cat([t.reshape(-1) for t in parts])

    def _product(self, s: torch.Tensor, c: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """`J v` `[P]` for `v` `[K]`: `grad_theta sum_i c_i v_i z_i` (one backward pass
        over the kinked rows; column `i` of `J` is `c_i grad_theta z_i`)."""
        mode = _Chosen(self._derivatives(s))
        with mode:
            self.forward(self.X)
        w = torch.split(c * v, self.sizes)
        live = [
            (torch.zeros_like(z).masked_scatter(m, wi) * z).sum()
            for z, m, wi in zip(mode.z, self.masks, w)
            if z.requires_grad
        ]
        if not live:
            return torch.zeros_like(self.g_fixed)
        return _flat(self.params, torch.autograd.grad(sum(live), self.params, allow_unused=True))

    def _matrix_free(
        self,
        factors: list[_Factor] | None,
        s: torch.Tensor,
        c: torch.Tensor,
        g: torch.Tensor,
    ) -> torch.Tensor:
        """The linearized problem `min ||g + J (s' - s)||` over the box without `J^T J`
        (`K` beyond `GRAM_BYTES`): L-BFGS-B from `s` on `1/2 ||b + J s'||^2`, its
        gradient `J^T (b + J s')`, the products from the factors where `J` is factored,
        else by backward passes (`_product`, `_transposed`); `MATRIX_FREE_ITER`
        iterations at most. Its `s'` is feasible, so the certificate computed from it is
        the norm of a generalized gradient that exists: an upper bound of the minimum.
        """
        if factors is not None:
            product = functools.partial(self._factored_product, factors)
            transposed = functools.partial(self._factored_transposed, factors)
        else:
            product = functools.partial(self._product, s, c)
            transposed = functools.partial(self._transposed, s, c)
        b = g - product(s)
        x0 = s.detach().cpu().numpy()

        def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
            r = b + product(torch.as_tensor(x).to(b))
            return 0.5 * float(r @ r), transposed(r).cpu().numpy()

        scale = max(fun(x0)[0], np.finfo(np.float64).tiny)  # its stopping rule is absolute
        res = scipy.optimize.minimize(
            lambda x: tuple(t / scale for t in fun(x)),
            x0,
            jac=True,
            method="L-BFGS-B",
            bounds=scipy.optimize.Bounds(0.0, 1.0),
            options={"maxiter": MATRIX_FREE_ITER, "ftol": 1e-12, "gtol": 1e-12},
        )
        return torch.as_tensor(res.x, dtype=torch.float64).clamp(0.0, 1.0)

    def _columns_gram(self, s: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """`J^T J` `[K, K]` from the columns: whole when `J` fits in `STORE_BYTES`, beyond
        by blocks."""
        K = len(s)
        P = sum(p.numel() for p in self.params)
        everything = torch.arange(K)
        if 8 * K * P <= STORE_BYTES:
            J = torch.empty(K, P, dtype=s.dtype, device=s.device)
            at = 0
            for block in self._column_blocks(s, c, everything):  # [B, P] each, in place
                J[at : at + len(block)] = block
                at += len(block)
            return J @ J.T
        G = torch.empty(K, K, dtype=s.dtype, device=s.device)
        size = max(1, STORE_BYTES // (16 * P))  # a block held while the rest streams by
        for lo in range(0, K, size):
            Ja = torch.cat(list(self._column_blocks(s, c, everything[lo : lo + size])))
            at = lo
            for Jb in self._column_blocks(s, c, everything[lo:]):
                block = Ja @ Jb.T
                G[lo : lo + len(Ja), at : at + len(Jb)] = block
                G[at : at + len(Jb), lo : lo + len(Ja)] = block.T
                at += len(Jb)
        return G

    def minimize(self, rounds: int) -> tuple[float, int, list[torch.Tensor]]:
        """Box Gauss-Newton: `(smallest ||g||^2 evaluated, rounds, s per call)`.

        Each round solves the linearized problem `min ||g + J (s' - s)||` over the box
        exactly (`box_least_squares_gram`, from `J^T J` and `J^T g`) and keeps `s'` if it
        lowers `||g||`. Where `J^T J` would exceed `GRAM_BYTES` (`K` far above the
        parameter count, e.g. units dead on every sample: `N` kink entries each), the
        round is matrix-free instead (`_matrix_free`: L-BFGS-B on the products `J v` and
        `J^T r`, from the factors or by backward passes; memory `O(K + P)` besides them). Where
        `g` is affine the Jacobian is formed once and the next rounds refine the solution
        against the recomputed residual.
        """
        s = self.s0
        raw, u = self._start
        g = self.g_fixed + raw
        best = float(g.pow(2).sum())
        G, factors = None, None
        done = 0
        while done < rounds:
            done += 1
            c = self._coefficients(u)
            if G is None or not self.affine:
                factors = self._factors(s, c)
                if 8 * len(s) ** 2 > GRAM_BYTES:
                    G = "matrix-free"
                elif factors is not None:
                    G = self._factored_gram(factors, len(s), s)
                else:
                    G = self._columns_gram(s, c)
            if isinstance(G, str):
                s_new = self._matrix_free(factors, s, c, g).to(s.device)
            else:
                if factors is not None:
                    h = self._factored_transposed(factors, g)
                else:
                    h = self._transposed(s, c, g)  # J^T g
                s_new = box_least_squares_gram(G, G @ s - h).to(s.device)
            raw, u_new = self._rows_gradient(s_new)
            g_new = self.g_fixed + raw
            value = float(g_new.pow(2).sum())
            if not value < best * (1 - 1e-9):
                break
            s, g, u, best = s_new, g_new, u_new, value
        return best, done, list(torch.split(s, self.sizes))


@dataclass
class _Factor:
    """One product's share of the Jacobian's columns: column `i` holds
    `M.scale x_i^T delta_i` at the entries `M` (`[in, out]`) of a parameter, and
    `b.scale delta_i` at the entries `b`."""

    x: torch.Tensor  # [K, in]
    delta: torch.Tensor  # [K, out]
    M: _Strided
    b: _Strided | None


@dataclass(frozen=True)
class _Strided:
    """A scaled view of parameter `param`: where it lies, as shape, strides and offset in
    the parameter's storage (a contiguous parameter), or as the flat indices of its
    entries (any other)."""

    param: int  # its index
    scale: float  # the product uses `scale` times the view
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int
    index: torch.Tensor | None = None

    @classmethod
    def of(cls, view: torch.Tensor, param: torch.Tensor, i: int, scale: float) -> _Strided:
        offset = view.storage_offset() - param.storage_offset()
        shape, stride = tuple(view.shape), tuple(view.stride())
        if param.is_contiguous():
            return cls(i, scale, shape, stride, offset)
        # the flat (row-major) index of every storage element of the parameter
        where = torch.empty_strided(param.shape, param.stride(), dtype=torch.long)
        where.copy_(torch.arange(param.numel()).reshape(param.shape))
        index = where.as_strided(shape, stride, where.storage_offset() + offset)
        return cls(i, scale, shape, stride, offset, index.to(param.device))

    def view(self, t: torch.Tensor) -> torch.Tensor:
        """The same entries of `t` (shaped like the parameter)."""
        if self.index is not None:
            return t.reshape(-1)[self.index]
        t = t.contiguous()
        return t.as_strided(self.shape, self.stride, t.storage_offset() + self.offset)

    def add_to(self, t: torch.Tensor, values: torch.Tensor) -> None:
        """Add `values` (shaped like the view) into `t` (a parameter-shaped tensor, contiguous)
        at the view's entries."""
        if self.index is not None:
            t.view(-1).index_add_(0, self.index.reshape(-1), values.reshape(-1))
        else:
            t.as_strided(self.shape, self.stride, t.storage_offset() + self.offset).add_(values)

    def count(self, uses: torch.Tensor) -> None:
        """Add one to `uses` (flat, one per parameter entry) at the view's entries."""
        if self.index is not None:
            index = self.index.reshape(-1)
            uses.index_add_(0, index, torch.ones_like(index, dtype=uses.dtype))
        else:
            uses.as_strided(self.shape, self.stride, uses.storage_offset() + self.offset).add_(1)


MAX_EXACT = 512  # kink entries up to which `_hamiltonian` forms its Jacobian column by column


def box_least_squares_gram(G: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """`argmin s^T G s - 2 b^T s` over `s in [0, 1]^K` for a Gram matrix `G = J^T J`
    `[K, K]` and `b = J^T t` `[K]`: the box least-squares problem `min ||J s - t||` without
    `J` (returns `[K]` float64 on the CPU).

    With `G = V diag(lam) V^T`, the `K x K` problem `min ||diag(lam)^(1/2) V^T s -
    diag(lam)^(-1/2) V^T b||` has the same minimizers (`b` lies in the range of `G`; the
    directions with `lam` below round-off are dropped), and bounded-variable least
    squares (`scipy`'s `bvls`) solves it.
    """
    G = G.detach().to("cpu", torch.float64)
    b = b.detach().to("cpu", torch.float64)
    lam, V = torch.linalg.eigh((G + G.T) / 2)
    keep = lam > lam.max().clamp_min(0.0) * len(lam) * torch.finfo(torch.float64).eps
    if not keep.any():
        return torch.zeros(len(b), dtype=torch.float64)
    root = lam[keep].sqrt()
    A = root[:, None] * V[:, keep].T  # [r, K]
    target = (V[:, keep].T @ b) / root
    if A.shape[0] < A.shape[1]:  # bvls wants at least as many rows as unknowns
        pad = A.shape[1] - A.shape[0]
        A = torch.cat([A, A.new_zeros(pad, A.shape[1])])
        target = torch.cat([target, target.new_zeros(pad)])
    sol = scipy.optimize.lsq_linear(A.numpy(), target.numpy(), bounds=(0.0, 1.0), method="bvls")
    return torch.as_tensor(sol.x, dtype=torch.float64).clamp(0.0, 1.0)


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


def _flat(params: Sequence[torch.Tensor], grads: Sequence[torch.Tensor | None]) -> torch.Tensor:
    """The gradients as one vector `[P]` (zeros for an unused parameter)."""
    return torch.cat(
        [
            (torch.zeros_like(p) if g is None else g.detach()).reshape(-1)
            for p, g in zip(params, grads)
        ]
    )


def _unflat(params: Sequence[torch.Tensor], v: torch.Tensor) -> list[torch.Tensor]:
    """`v` `[P]` split and shaped like `params`."""
    return [t.reshape(p.shape) for p, t in zip(params, torch.split(v, [p.numel() for p in params]))]


def _slope(func, args, kwargs) -> float | None:
    """The derivative for `z < 0` of a ReLU / LeakyReLU call, or None for any other call."""
    if func in _RELUS:
        return 0.0
    if func in _LEAKY:
        return float(args[1] if len(args) > 1 else kwargs.get("negative_slope", 0.01))
    return None
