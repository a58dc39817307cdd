"""Layer-step schedules `rho_1..rho_L` of a leaky ResNet (paper 000, §2 "adaptive layer steps")."""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["adaptive_steps", "adaptive_steps_from_norms", "layer_steps"]


def layer_steps(kind: str, depth: int, a: float = 0.5) -> torch.Tensor:
    """Initial layer steps `rho` of shape `[L]`, positive and summing to 1.

    Args:
        kind: `equidistant` (`1/L`), `irregular` (`1/L + (a/L)(1/4 - |l/L - 1/2|)`, then
            renormalized), or `adaptive` (starts equidistant; updated during training by
            `adaptive_steps`).
        depth: number of residual layers `L`.
        a: amplitude of the irregular schedule, in `[0, 1)`.
    """
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    idx = torch.arange(1, depth + 1, dtype=torch.float64)
    if kind in ("equidistant", "adaptive"):
        rho = torch.full((depth,), 1.0 / depth, dtype=torch.float64)
    elif kind == "irregular":
        if not 0.0 <= a < 1.0:
            raise ValueError(f"irregular schedule needs a in [0, 1), got {a}")
        rho = 1.0 / depth + (a / depth) * (0.25 - (idx / depth - 0.5).abs())
    else:
        raise ValueError(f"unknown schedule {kind!r} (equidistant, irregular, adaptive)")
    return rho / rho.sum()


def adaptive_steps(
    path: Sequence[torch.Tensor], rho: torch.Tensor, damping: float = 1.0
) -> torch.Tensor:
    """One adaptive update of the layer steps (paper 000, §2; spec `leaky-resnets.md`).

    `c_l = ||A_l - A_{l-1}||_F / (rho_l ||A_{l-1}||_F)` and `rho_l <- c_l^{-1} / sum_i c_i^{-1}`,
    blended as `(1 - damping) rho + damping new`. No gradient flows through `rho`.

    Args:
        path: representations `[A_0, ..., A_L]`, each `[N, w]`.
        rho: current steps, `[L]`.
        damping: blend factor `eta` in `(0, 1]` (1 = plain update).
    Returns:
        New steps, `[L]`, summing to 1.
    """
    with torch.no_grad():
        diffs = torch.stack([(b - a).norm() for a, b in zip(path[:-1], path[1:])])
        norms = torch.stack([a.norm() for a in path[:-1]])
        return adaptive_steps_from_norms(diffs, norms, rho, damping)


def adaptive_steps_from_norms(
    diffs: torch.Tensor, norms: torch.Tensor, rho: torch.Tensor, damping: float = 1.0
) -> torch.Tensor:
    """`adaptive_steps` from `||A_l - A_{l-1}||_F` (`diffs`, `[L]`) and `||A_{l-1}||_F`
    (`norms`, `[L]`): for callers that never hold the whole path."""
    with torch.no_grad():
        norms = norms.clamp_min(1e-30)
        c = (diffs / (rho.to(diffs) * norms)).clamp_min(1e-30)
        new = (1.0 / c) / (1.0 / c).sum()
        out = (1.0 - damping) * rho.to(new) + damping * new
        return (out / out.sum()).to(rho)
