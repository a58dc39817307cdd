"""Trust-region Newton in the metric of the Gauss-Newton matrix: the `woodbury_newton`
phase, for the smoothed stages of a continuation.

One step minimizes the quadratic model `g.p + p.Hp/2` (`H` the loss's exact Hessian,
`torch.autograd` double backward on a graph built once per point) over the ellipsoid
`||p||_M <= radius`, `M = D + (2/N) J^T J` the Gauss-Newton matrix (`Woodbury`: `D` the
weight decay's diagonal Hessian, `J` the output Jacobian), by GLTR in the `M` inner
product (Gould, Lucidi, Roma & Toint 1999; `_trust_region.gltr` is the `M = I`
case): Lanczos on `H` preconditioned by `M^{-1}`, applied exactly through the Woodbury
identity, until the residual is below the forcing tolerance
`min(1/2, sqrt(||g||_{M^-1})) ||g||_{M^-1}`. The outer iteration is
`_trust_region.trust_region_step`'s (accept at `rho > 0.15`, quarter the radius at
`rho < 0.25`, double it at `rho > 0.75` on the boundary). `J` is formed again every
`refresh` accepted steps: `M` only has to stay close to the Hessian's Gauss-Newton part.

Why the metric: on the leaky ResNets of paper 000 the decay's curvature `lam rho / L~`
(~1e-4) is the Hessian's scale on every direction the data do not see (the complement of
a subspace of dimension at most `N d_out`), while the data's is O(1), so a Euclidean trust
region and an unpreconditioned Krylov solve resolve those directions last. The Hessian is
also indefinite (negative curvature down to 36 times the decay's), which is why a trust
region and not a damped (Levenberg-Marquardt) MINRES solve: measured in
`docs/lab-notes/leaky-resnet.md`, "The smoothed stages' solver: a Woodbury metric"
(fewer Krylov iterations per step; the stages still take more steps than a preset allows).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from bottlenecklab.training._trust_region import _hvp, _small_problem
from bottlenecklab.training._woodbury import Woodbury

__all__ = ["WoodburyTrustRegion", "preconditioned_gltr", "woodbury_trust_region_step"]

LANCZOS_ITERS = 200  # most Lanczos iterations (vectors kept) per subproblem
ETA = 0.15  # acceptance threshold of `rho` (scipy's, `_trust_region.ETA`)
MAX_RADIUS = 1000.0


def _assign(params, flat: torch.Tensor) -> None:
    with torch.no_grad():
        for p, v in zip(params, torch.split(flat, [p.numel() for p in params])):
            p.copy_(v.view_as(p))


def preconditioned_gltr(
    hvp: Callable[[torch.Tensor], torch.Tensor],
    g: torch.Tensor,
    radius: float,
    tol: float,
    precond: Callable[[torch.Tensor], torch.Tensor],
    iters: int = LANCZOS_ITERS,
) -> tuple[torch.Tensor, float, bool, int]:
    """The trust-region subproblem `min_p g.p + p.Hp/2, ||p||_M <= radius` over a
    preconditioned Lanczos subspace (GLTR in the `M` inner product; `precond` = `M^{-1}`):
    `(p, predicted decrease, on the boundary, Lanczos iterations)`."""
    z = precond(g)
    g_m = math.sqrt(max(float(g @ z), 0.0))  # ||g||_{M^-1}
    kmax = min(iters, g.numel())
    Q = [z / g_m]  # M-orthonormal Lanczos vectors
    MQ = [g / g_m]  # M times them
    alphas: list[float] = []
    betas: list[float] = []
    beta = 0.0
    h = torch.zeros(1, dtype=torch.float64)
    T = torch.zeros((1, 1), dtype=torch.float64)
    k = 0
    for k in range(1, kmax + 1):
        q = Q[-1]
        w = hvp(q) - (beta * MQ[-2] if k > 1 else 0)
        alpha = float(q @ w)
        w = w - alpha * MQ[-1]
        Qs, MQs = torch.stack(Q), torch.stack(MQ)
        w = w - MQs.T @ (Qs @ w)  # full reorthogonalization in the M inner product
        z = precond(w)
        beta = math.sqrt(max(float(w @ z), 0.0))
        alphas.append(alpha)
        betas.append(beta)
        a = torch.tensor(alphas, dtype=torch.float64)
        b = torch.tensor(betas, dtype=torch.float64)
        T = torch.diag(a) + torch.diag(b[:-1], 1) + torch.diag(b[:-1], -1)
        h = _small_problem(T, g_m, radius)
        if beta * abs(float(h[-1])) <= tol or beta == 0.0:
            break
        Q.append(z / beta)
        MQ.append(w / beta)
    predicted = -(g_m * float(h[0]) + 0.5 * float(h @ (T @ h)))
    p = h.to(g) @ torch.stack(Q[: h.numel()])
    return p, predicted, float(h.norm()) >= radius * (1 - 1e-12), k


@dataclass
class WoodburyTrustRegion:
    """The resumable state of a `woodbury_newton` phase (what a checkpoint keeps as
    `optimizer`): the trust radius (in the `M` norm), the accepted steps since `M` was
    formed (`age`) and the parameters it was formed at (`anchor`, so that a resumed
    phase forms the same `M` again: bitwise resume). Not resumed: `M` itself (`base`),
    the regularizer's diagonal (`diagonal`, the phase's cache) and the counts of the
    last step (`lanczos`: Lanczos iterations, `accepted`)."""

    radius: float
    refresh: int = 1
    age: int = 0
    anchor: torch.Tensor | None = None
    base: Woodbury | None = None
    diagonal: torch.Tensor | None = None
    lanczos: int = 0
    accepted: bool = False

    def state_dict(self) -> dict[str, object]:
        return {"radius": self.radius, "age": self.age, "anchor": self.anchor}

    def load_state_dict(self, state: dict[str, object]) -> None:
        self.radius, self.age = float(state["radius"]), int(state["age"])
        self.anchor, self.base = state["anchor"], None


def woodbury_trust_region_step(
    loss_fn: Callable[[], torch.Tensor],
    params: list[torch.nn.Parameter],
    state: WoodburyTrustRegion,
    preconditioner: Callable[[], Woodbury],
) -> tuple[torch.Tensor, bool]:
    """One trust-region Newton iteration in the Gauss-Newton metric (module docstring), in
    place, `state` updated; returns (the loss before it, whether the method has stopped:
    no decrease predicted at float precision, or the radius below the iterate's spacing).

    Args:
        loss_fn: the loss from the current `params`, twice differentiable by autograd.
        params: the parameters (one dtype and device).
        state: radius and preconditioner cache (`WoodburyTrustRegion`).
        preconditioner: `() -> Woodbury` of the Gauss-Newton matrix at the current
            parameters; called every `state.refresh` accepted steps.
    """
    x = torch.cat([q.detach().reshape(-1) for q in params])
    if state.base is None and state.anchor is not None and state.age < state.refresh:
        _assign(params, state.anchor)  # resumed: the M of the uninterrupted phase
        state.base = preconditioner()
        _assign(params, x)
    elif state.base is None or state.age >= state.refresh:
        state.base, state.anchor, state.age = preconditioner(), x.clone(), 0
    with torch.enable_grad():
        loss = loss_fn()
        grads = torch.autograd.grad(loss, params, create_graph=True, materialize_grads=True)
    g = torch.cat([t.detach().reshape(-1) for t in grads])
    f0 = float(loss.detach())
    eps = torch.finfo(g.dtype).eps
    state.accepted, state.lanczos = False, 0
    # the radius below the iterate's spacing (in the M norm): no step can be taken
    spacing = eps * float(x.norm()) * math.sqrt(float(state.base.diag.max()))
    if float(g.norm()) == 0.0 or state.radius <= spacing:
        return loss.detach(), True
    exact_hvp = _hvp(grads, params)

    def hvp(v: torch.Tensor) -> torch.Tensor:
        return exact_hvp(v).detach()

    g_m = math.sqrt(max(float(g @ state.base.solve(g)), 0.0))  # ||g||_{M^-1}
    tol = min(0.5, math.sqrt(g_m)) * g_m  # forcing term: superlinear convergence
    p, predicted, hit, state.lanczos = preconditioned_gltr(
        hvp, g, state.radius, tol, state.base.solve
    )
    if not predicted > eps * abs(f0):  # no decrease at float precision
        return loss.detach(), True
    _assign(params, x + p)
    with torch.no_grad():
        trial = float(loss_fn())
    rho = (f0 - trial) / predicted
    if not rho >= 0.25:  # also NaN / Inf trials
        state.radius *= 0.25
    elif rho > 0.75 and hit:
        state.radius = min(2 * state.radius, MAX_RADIUS)
    if rho > ETA:
        state.accepted, state.age = True, state.age + 1
    else:
        _assign(params, x)
    return loss.detach(), False
