"""Trust-region Newton in torch: Steihaug-CG on exact Hessian-vector products, on the
parameters' own device (the `trust_region` phase; `newton` is the scipy twin).

Why a second implementation: scipy's `trust-krylov` (`_newton.py`) runs on the host, so on a
GPU every Krylov iteration copies a Hessian-vector product to the CPU and back; here the
whole iteration stays on the device. The subproblem `min_p g.p + p.Hp/2, ||p|| <= radius`
is solved by truncated CG (Steihaug 1983; Nocedal & Wright, Alg. 7.2) with one double
backward per CG iteration on a graph built once per point. Its branches (negative
curvature, the boundary, convergence) are masked tensor updates, so the host reads the
state only every `CHECK_EVERY` CG iterations.

The outer iteration is scipy's `_minimize_trust_region` (the rules that kept it moving at
ReLU kinks): a step is accepted when `rho = actual / predicted decrease > 0.15`; the radius
is quartered when `rho < 0.25` (also when the trial loss is NaN/Inf) and doubled, up to
1000, when `rho > 0.75` on the boundary; the method stops when the model predicts no
decrease at float precision or the radius is below the iterate's float spacing.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["TrustRegion", "trust_region_step"]

ETA = 0.15  # scipy's acceptance threshold of `rho`
MAX_RADIUS = 1000.0  # scipy's default `max_trust_radius`
CG_ITERS = 250  # most CG iterations per subproblem (truncated CG still descends)
CHECK_EVERY = 8  # CG iterations between reads of the "done" flag by the host


class TrustRegion:
    """The resumable state of a trust-region phase: its radius (what a checkpoint keeps as
    `optimizer`), plus the loss graph at the current point, reused while the parameters
    are unchanged (their autograd version counters)."""

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


def _to_boundary(z: torch.Tensor, d: torch.Tensor, radius: float) -> torch.Tensor:
    """`tau >= 0` with `||z + tau d|| = radius` (`||z|| <= radius`)."""
    a, b, c = d @ d, 2 * (z @ d), z @ z - radius**2
    return (-b + torch.sqrt((b * b - 4 * a * c).clamp_min(0))) / (2 * a)


def steihaug(
    hvp: Callable[[torch.Tensor], torch.Tensor], g: torch.Tensor, radius: float, tol: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Truncated CG on `min_p g.p + p.Hp/2, ||p|| <= radius`: `(p, H p, on the boundary)`.

    Stops at `||r|| < tol`, at negative curvature or at the boundary (then `p` is on it);
    every update is a masked tensor op, the host checks the flags every `CHECK_EVERY`.
    """
    z, Hz = torch.zeros_like(g), torch.zeros_like(g)
    r, d = g.clone(), -g
    rr = r @ r
    done = torch.zeros((), dtype=torch.bool, device=g.device)
    hit = torch.zeros((), dtype=torch.bool, device=g.device)
    for j in range(min(CG_ITERS, g.numel())):
        if j % CHECK_EVERY == 0 and j > 0 and bool(done):
            break
        Bd = hvp(d)
        dBd = d @ Bd
        alpha = rr / dBd
        z_in = z + alpha * d
        out = ((dBd <= 0) | (z_in @ z_in >= radius**2)) & ~done
        tau = torch.where(out, _to_boundary(z, d, radius), alpha)
        step = torch.where(done, torch.zeros_like(tau), tau)
        z, Hz = z + step * d, Hz + step * Bd
        r_new = r + alpha * Bd
        rr_new = r_new @ r_new
        hit = hit | out
        stop = done | out
        d = torch.where(stop, d, -r_new + (rr_new / rr) * d)
        r = torch.where(stop, r, r_new)
        rr = torch.where(stop, rr, rr_new)
        done = stop | (rr_new < tol**2)
    return z, Hz, hit


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
    p, Hp, hit = steihaug(_hvp(grads, params), g, state.radius, min(0.5, g_norm**0.5) * g_norm)
    predicted = -float(g @ p + 0.5 * (p @ Hp))
    if not predicted > 0:  # no decrease at float precision
        return loss.detach(), True
    _assign(params, x + p)
    trial = _graph(loss_fn, params, state)
    rho = (float(loss.detach()) - float(trial[0].detach())) / predicted
    if not rho >= 0.25:
        state.radius *= 0.25
    elif rho > 0.75 and bool(hit):
        state.radius = min(2 * state.radius, MAX_RADIUS)
    if not rho > ETA:  # rejected: back to the point and its graph
        _assign(params, x)
        state._graph = (_versions(params), loss, grads, g)
    return loss.detach(), False


def _assign(params, flat: torch.Tensor) -> None:
    with torch.no_grad():
        for p, v in zip(params, torch.split(flat, [p.numel() for p in params])):
            p.copy_(v.view_as(p))
