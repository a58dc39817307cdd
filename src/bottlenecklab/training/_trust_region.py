"""Trust-region Newton in torch: a Lanczos (GLTR) subproblem solver on exact
Hessian-vector products, on the parameters' own device (the `trust_region` phase; `newton`
is the scipy twin).

Why a second implementation: scipy's `trust-krylov` (`_newton.py`) runs on the host, so on a
GPU every Krylov iteration copies a Hessian-vector product to the CPU and back; here the
Krylov vectors stay on the device (one double backward per iteration on a graph built once
per point) and the host reads only the small tridiagonal matrix, every `CHECK_EVERY`
iterations. Like scipy's GLTR, and unlike Steihaug-CG, the subproblem keeps iterating on
the trust-region boundary, which is what keeps the method moving at ReLU kinks (a
Steihaug step there is a scaled gradient step: measured, it stalls).

The outer iteration is scipy's `_minimize_trust_region`: a step is accepted when
`rho = actual / predicted decrease > 0.15`; the radius is quartered when `rho < 0.25`
(also when the trial loss is NaN/Inf) and doubled, up to 1000, when `rho > 0.75` on the
boundary; the method stops when the predicted decrease is below the loss's float spacing
or the radius below the iterate's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import scipy.linalg
import torch

__all__ = ["TrustRegion", "trust_region_step"]

ETA = 0.15  # scipy's acceptance threshold of `rho`
MAX_RADIUS = 1000.0  # scipy's default `max_trust_radius`
CG_ITERS = 100  # most Lanczos iterations (vectors kept) per subproblem
CHECK_EVERY = 8  # Lanczos iterations between reads of `T` by the host (accelerators)


class TrustRegion:
    """The resumable state of a trust-region phase: its radius (what a checkpoint keeps as
    `optimizer`), plus the loss graph at the current point, reused by the next iteration
    while the parameters are unchanged (their autograd version counters)."""

    def __init__(self, radius: float) -> None:
        self.radius = float(radius)
        self._graph: tuple | None = None

    def state_dict(self) -> dict[str, float]:
        return {"radius": self.radius}

    def load_state_dict(self, state: dict[str, float]) -> None:
        self.radius = float(state["radius"])


def _versions(params) -> tuple[int, ...]:
    return tuple(p._version for p in params)


def _graph(loss_fn, params, state: TrustRegion):
    """`(loss, grads with create_graph, flat gradient)` at the current parameters."""
    if state._graph is not None and state._graph[0] == _versions(params):
        return state._graph[1:]
    with torch.enable_grad():
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params, create_graph=True, materialize_grads=True)
    g = torch.cat([x.detach().reshape(-1) for x in grads])
    state._graph = (_versions(params), loss, grads, g)
    return loss, grads, g


def _hvp(grads, params) -> Callable[[torch.Tensor], torch.Tensor]:
    """`v [P] -> H v [P]`, one double backward through `grads`."""
    sizes = [p.numel() for p in params]
    live = [i for i, g in enumerate(grads) if g.requires_grad]  # others are constant in p

    def hvp(v: torch.Tensor) -> torch.Tensor:
        if not live:
            return torch.zeros_like(v)
        vs = torch.split(v, sizes)
        Hv = torch.autograd.grad(
            [grads[i] for i in live],
            params,
            grad_outputs=[vs[i].view_as(grads[i]) for i in live],
            retain_graph=True,
            materialize_grads=True,
        )
        return torch.cat([h.reshape(-1) for h in Hv])

    return hvp


def _small_problem(T: torch.Tensor, g_norm: float, radius: float) -> torch.Tensor:
    """`h [k]` minimizing `g_norm h_1 + h.T h/2` over `||h|| <= radius` (T `[k, k]`
    tridiagonal, host float64): the interior Newton point, else `h = -(T + mu I)^-1 c` with
    `||h|| = radius` (`_boundary_mu`, `_onto_boundary`: the hard case fills the boundary
    along the lowest mode).

    Solved in the eigenbasis of `T` (scipy's `eigh_tridiagonal`, `O(k^2)`), on the host:
    GLTR calls it at every Lanczos iteration on a CPU."""
    d = T.diagonal().numpy()
    e = T.diagonal(1).numpy()
    lam, V = scipy.linalg.eigh_tridiagonal(d, e)
    c = g_norm * V[0]  # V^T (g_norm e_1)
    lo = max(0.0, -float(lam[0]))
    if lo == 0.0 and float(lam[0]) > 0:
        h = -c / lam
        if float(np.linalg.norm(h)) <= radius:
            return torch.from_numpy(V @ h)
    hi = lo + float(np.linalg.norm(c)) / radius + 1e-300
    h = -c / (lam + _boundary_mu(lam, c, radius, lo, hi))
    return torch.from_numpy(V @ _onto_boundary(h, c, radius))


def _onto_boundary(h: np.ndarray, c: np.ndarray, radius: float) -> np.ndarray:
    """`h` (eigenbasis, lowest mode first) with `||h|| = radius`: where `mu` sits within
    float precision of `-lam_1` (the hard case, or nearly: `c_1` tiny), `||h(mu)||` jumps
    by more than its tolerance per ulp of `mu`, so the lowest mode's component takes up
    the difference (its residual `(lam_1 + mu) dh_1` stays at round-off); else `h` is
    rescaled (a relative change at float precision)."""
    norm = float(np.linalg.norm(h))
    if abs(norm - radius) <= 4 * np.finfo(float).eps * radius:
        return h
    rest = norm**2 - float(h[0]) ** 2
    if rest <= radius**2:
        h = h.copy()
        sign = math.copysign(1.0, float(h[0])) if h[0] != 0 else -math.copysign(1.0, c[0])
        h[0] = sign * math.sqrt(radius**2 - rest)
        return h
    return h * (radius / norm)


def _boundary_mu(lam: np.ndarray, c: np.ndarray, radius: float, lo: float, hi: float) -> float:
    """The `mu` in `(lo, hi]` with `||c / (lam + mu)|| = radius` (`lo = max(0, -lam_1)`,
    the norm decreasing in `mu`): Newton on the secular equation
    `1/||h(mu)|| - 1/radius = 0` (concave and increasing: Moré & Sorensen 1983),
    safeguarded by bisection of the bracket, to float precision."""
    c2 = c * c
    mu = lo if float(lam[0]) + lo > 0 else hi  # from the left Newton is monotone
    for _ in range(100):
        q = lam + mu
        if not float(q[0]) > 0:
            mu = 0.5 * (lo + hi)
            continue
        norm2 = float(np.sum(c2 / q**2))
        norm = math.sqrt(norm2)
        if norm > radius:
            lo = mu
        else:
            hi = mu
        if abs(norm - radius) <= 4 * np.finfo(float).eps * radius or hi - lo <= (
            4 * np.finfo(float).eps * hi
        ):
            return mu
        dphi = float(np.sum(c2 / q**3)) / (norm2 * norm)  # d(1/||h||)/d mu
        step = mu - (1 / norm - 1 / radius) / dphi if dphi > 0 else math.nan
        mu = step if lo < step < hi else 0.5 * (lo + hi)
    return hi


def gltr(
    hvp: Callable[[torch.Tensor], torch.Tensor], g: torch.Tensor, radius: float, tol: float
) -> tuple[torch.Tensor, float, bool]:
    """The trust-region subproblem `min_p g.p + p.Hp/2, ||p|| <= radius` over a Lanczos
    (Krylov) subspace (GLTR; Gould, Lucidi, Roma & Toint 1999): `(p, predicted decrease,
    on the boundary)`.

    Unlike Steihaug-CG it does not stop where the boundary or negative curvature is met:
    it keeps growing the subspace and solves the small tridiagonal problem exactly, until
    the residual `beta_{k+1} |h_k|` is below `tol`. The Lanczos vectors are kept (`[k, P]`,
    fully reorthogonalized); the host reads `T` only every `CHECK_EVERY` iterations.
    """
    g_norm = g.norm()
    kmax = min(CG_ITERS, g.numel())
    Q = g.new_empty((min(kmax, 16), g.numel()))  # the Lanczos vectors, rows; grows by 2x
    Q[0] = g / g_norm
    alphas, betas = [], []
    beta = g_norm.new_zeros(())
    every = 1 if g.device.type == "cpu" else CHECK_EVERY  # a host read is free on the CPU
    for k in range(1, kmax + 1):
        q = Q[k - 1]
        w = hvp(q) - (beta * Q[k - 2] if k > 1 else 0)
        alpha = q @ w
        w = w - alpha * q
        w = w - Q[:k].T @ (Q[:k] @ w)  # full reorthogonalization
        beta = w.norm()
        alphas.append(alpha)
        betas.append(beta)
        if k % every == 0 or k == kmax:
            a, b = torch.stack(alphas).cpu(), torch.stack(betas).cpu()  # one host read
            T = (torch.diag(a) + torch.diag(b[:-1], 1) + torch.diag(b[:-1], -1)).double()
            h = _small_problem(T, float(g_norm), radius)
            if float(b[-1]) * abs(float(h[-1])) <= tol or float(b[-1]) == 0.0:
                break
        if k == Q.shape[0]:
            Q = torch.cat([Q, torch.empty_like(Q[: min(k, kmax - k + 1)])])
        Q[k] = w / beta.clamp_min(torch.finfo(g.dtype).tiny)
    predicted = -(float(g_norm) * float(h[0]) + 0.5 * float(h @ (T @ h)))
    p = h.to(g) @ Q[: h.numel()]
    return p, predicted, float(h.norm()) >= radius * (1 - 1e-12)


def trust_region_step(
    loss_fn: Callable[[], torch.Tensor], params: list[torch.nn.Parameter], state: TrustRegion
) -> tuple[torch.Tensor, bool]:
    """One trust-region iteration on `loss_fn()` over `params` (in place), `state.radius`
    updated; returns (the loss before it, whether the method has stopped).

    Args:
        loss_fn: the loss from the current `params`, twice differentiable by autograd.
        params: the parameters (one dtype and device); state: the radius and graph cache.
    """
    loss, grads, g = _graph(loss_fn, params, state)
    g_norm = float(g.norm())
    x = torch.cat([p.detach().reshape(-1) for p in params])
    if g_norm == 0.0 or state.radius <= torch.finfo(x.dtype).eps * float(x.norm()):
        return loss.detach(), True
    tol = min(0.5, g_norm) * g_norm  # forcing term ||g||: quadratic convergence
    p, predicted, hit = gltr(_hvp(grads, params), g, state.radius, tol)
    if not predicted > torch.finfo(x.dtype).eps * abs(
        float(loss.detach())
    ):  # none at float precision
        return loss.detach(), True
    _assign(params, x + p)
    trial = _graph(loss_fn, params, state)
    rho = (float(loss.detach()) - float(trial[0].detach())) / predicted
    if not rho >= 0.25:
        state.radius *= 0.25
    elif rho > 0.75 and hit:
        state.radius = min(2 * state.radius, MAX_RADIUS)
    if not rho > ETA:  # rejected: back to the point (its graph is rebuilt: the in-place
        _assign(params, x)  # writes invalidate the saved tensors of the double backward)
        state._graph = None
    return loss.detach(), False


def _assign(params, flat: torch.Tensor) -> None:
    with torch.no_grad():
        for p, v in zip(params, torch.split(flat, [p.numel() for p in params])):
            p.copy_(v.view_as(p))
