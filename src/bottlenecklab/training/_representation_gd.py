"""Training in representation space: projected gradient descent on the pre-activations
`Z_1..Z_L` of an FCNN (paper 004, §3.3 and App B.1; spec `l2-sparsity.md`, "Solvers beyond
weight space").

Each step lowers the Tikhonov form of the representation loss
`L^r_eps(Z) = C(Z_L) + lam sum_l Tr[K_l (K^s_{l-1} + eps_l I)^-1]` (rows = samples,
`K_l = Z_l Z_l^T`, `K^s_{l-1} = Zs_{l-1} Zs_{l-1}^T`, `Zs_{l-1} = [sigma(Z_{l-1}), beta 1]`,
`Zs_0 = [X, beta 1]`, `eps_l = eps_rel Tr K^s_{l-1} / N`), then projects every layer in
order, `Z_l <- Zs_{l-1} Zs_{l-1}^+ Z_l` with `Zs_{l-1}` recomputed from the projected
`Z_{l-1}`, so the representations are always those of a network: `Psi(Z)`, the minimal-norm
weights `W_l^T = Zs_{l-1}^+ Z_l` (`theory.representation_weights`), reproduces them exactly.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import torch

from bottlenecklab import theory
from bottlenecklab.tasks import COSTS
from bottlenecklab.training._trainer import Bookkeeper

__all__ = ["RepresentationGDResult", "network_from_representations", "train_representations"]


@dataclass
class RepresentationGDResult:
    """What `train_representations` returns.

    Args:
        model: `Psi(Z)`, the FCNN with the minimal-norm weights of the final `Z` (float64).
        history: per logged step `{"step", "loss_r", "loss_weight"}`: the Tikhonov
            representation loss and the weight-space loss `C + lam ||theta||^2` of `Psi(Z)`.
    """

    model: Any
    history: list[dict[str, float]] = field(default_factory=list)


def _features(net: Any, Z: torch.Tensor, X_rows: int) -> torch.Tensor:
    """`Zs = [sigma(Z), beta 1]`, `[N, n+1]`."""
    ones = torch.full((X_rows, 1), net.cfg.bias_scale, dtype=Z.dtype)
    return torch.cat([net.act(Z), ones], dim=1)


def _project(net: Any, X: torch.Tensor, Z: list[torch.Tensor]) -> list[torch.Tensor]:
    """Every `Z_l` onto the column space of `Zs_{l-1}` (recomputed), layer by layer."""
    ones = torch.full((X.shape[0], 1), net.cfg.bias_scale, dtype=X.dtype)
    S = torch.cat([X, ones], dim=1)
    out = []
    for Zl in Z:
        Zp = S @ (theory.pinv_cut(S) @ Zl)
        out.append(Zp)
        S = _features(net, Zp, X.shape[0])
    return out


def network_from_representations(model: Any, X: torch.Tensor, Z: list[torch.Tensor]) -> Any:
    """`Psi(Z)`: a float64 copy of the FCNN `model` with the minimal-norm weights of `Z`
    (paper 004, Prop 1): `W_l^T = Zs_{l-1}^+ Z_l`, `Zs` computed from the network's own
    forward pass (so for projected `Z` it reproduces `Z` exactly).

    Args:
        model: an `FCNN`; X: `[N, d_in]`; Z: `[Z_1..Z_L]`, `Z_l` `[N, n_l]`.
    """
    net = copy.deepcopy(model).to(device="cpu", dtype=torch.float64)
    X = X.to(torch.float64)
    ones = torch.full((X.shape[0], 1), net.cfg.bias_scale, dtype=torch.float64)
    S = torch.cat([X, ones], dim=1)
    with torch.no_grad():
        for l, Zl in enumerate(Z):
            W = theory.representation_weights(S, Zl.to(torch.float64))  # [n_l, n_{l-1}+1]
            net.weights[l].copy_(W[:, :-1])
            net.biases[l].copy_(W[:, -1])  # the model adds beta * b: S's last column is beta
            S = _features(net, S @ W.T, X.shape[0])
    return net


def train_representations(
    model: Any,
    X: torch.Tensor,
    Y: torch.Tensor,
    lam: float,
    *,
    steps: int,
    lr: float,
    eps_rel: float = 1e-6,
    cost: str = "mse",
    project: bool = True,
    log_every: int = 100,
) -> RepresentationGDResult:
    """Projected gradient descent on the representations of an FCNN, started from its
    current pre-activations on `X` (paper 004, App B.1), in float64.

    A step `Z' = P(Z - eta grad L^r_eps(Z))` (`P` the layer-by-layer projection, skipped
    with `project=False`) is kept only if it lowers `L^r_eps`; then `eta` grows by 1.2,
    otherwise it is halved and the step retried: the loss never rises.

    Args:
        model: an `FCNN` (not changed); X: `[N, d_in]`; Y: `[N, d_out]`; lam: `lambda`;
        steps: gradient steps (accepted or not); lr: the first `eta`;
        eps_rel: `eps_l / (Tr K^s_{l-1} / N)`; cost: a key of `tasks.COSTS`;
        project: apply the projection; log_every: history interval.
    """
    X64, Y64 = X.to(torch.float64), Y.to(torch.float64)
    base = copy.deepcopy(model).to(device="cpu", dtype=torch.float64)
    with torch.no_grad():
        pre, _ = base.forward_path(X64)
    fn = COSTS[cost]
    N = X64.shape[0]
    ones = torch.full((N, 1), base.cfg.bias_scale, dtype=torch.float64)

    def loss_r(Z: list[torch.Tensor]) -> torch.Tensor:
        S = torch.cat([X64, ones], dim=1)
        total = fn(Z[-1], Y64)
        for Zl in Z:  # Tr[K_l (K^s_{l-1} + eps I)^-1], the spec's eps rule (theory.ridge)
            total = total + lam * ((Zl @ Zl.T) * theory.ridge(S @ S.T, eps_rel)).sum()
            S = _features(base, Zl, N)
        return total

    Z = [z.detach().clone() for z in pre]
    if project:
        Z = _project(base, X64, Z)
    book = Bookkeeper(base, total=steps, log_every=log_every)  # rows, no checkpoints
    book.start()
    eta = lr
    value = float(loss_r(Z))
    for step in range(steps + 1):
        if book.due(step, step == steps):
            net = network_from_representations(base, X64, Z)
            with torch.no_grad():
                weight = float(fn(net(X64), Y64) + lam * net.param_norm_sq())
            book.log({"step": step, "loss_r": value, "loss_weight": weight, "lr": eta})
        if step == steps:
            break
        Zg = [z.clone().requires_grad_(True) for z in Z]
        grads = torch.autograd.grad(loss_r(Zg), Zg)
        with torch.no_grad():
            trial = [z - eta * g for z, g in zip(Z, grads)]
            if project:
                trial = _project(base, X64, trial)
            new = float(loss_r(trial))
        if new < value:
            Z, value, eta = trial, new, eta * 1.2
        else:
            eta /= 2
        book.tick(1)
    book.bar.close()
    return RepresentationGDResult(network_from_representations(base, X64, Z), book.result.metrics)
