"""Conservation of the Hamiltonian along integrated geodesics (paper 000, §1.5).

`H` is conserved by the exact flow, also across the ReLU kinks: the `dA/dp` field is
continuous, the `dB/dp` field jumps where an entry of `A` changes sign, and `H` (Lipschitz)
is constant along the concatenated smooth pieces. A fixed-step integrator sees the kinks:

- on a path that crosses no kink (`kink_free_start`), RK4 conserves `H` to fourth order;
- on a generic path (`generic_start`), every step that contains a crossing makes an error
  `h * Delta * e(theta)` in `B`, with `Delta` the jump of the field and `theta` in `[0, 1)`
  where the crossing falls inside the step. For RK4 (stages at `0, h/2, h/2, h`)
  `e(theta) = theta - 1/6` for `theta < 1/2` and `theta - 5/6` above: a sawtooth of mean 0.
  The drift of `H` is therefore first order, `|drift| <= C h`, but its coefficient is a sum
  of sawtooth values over the crossings, whose phases change erratically with `h`. The drift
  does not halve at every step doubling, it scatters within the `C h` envelope.
- cutting the steps at the crossings (`hamiltonian_flow_located`) removes that error: what
  remains is RK4's on the smooth pieces.

Rows are samples; paths are `[n + 1, N, w]` on the uniform grid of `hamiltonian_flow`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from bottlenecklab.theory._hamiltonian_flow import (
    Field,
    hamiltonian,
    hamiltonian_flow,
    vector_field,
)
from bottlenecklab.theory._kink_events import hamiltonian_flow_located

__all__ = [
    "drift_ratios",
    "drift_refinement",
    "generic_start",
    "hamiltonian_drift",
    "kink_free_start",
    "refinement_study",
    "sign_crossings",
]


def hamiltonian_drift(A_path: torch.Tensor, B_path: torch.Tensor, leak: float) -> torch.Tensor:
    """Relative drift `|H_p - H_0| / |H_0|` of the Hamiltonian along a path.

    Args:
        A_path: representations `[n + 1, N, w]`.
        B_path: momenta `[n + 1, N, w]`.
        leak: `L~`.
    Returns:
        `[n + 1]` (0 at `p = 0`).
    """
    H = hamiltonian(A_path, B_path, leak)  # [n + 1]
    return (H - H[0]).abs() / H[0].abs()


def sign_crossings(A_path: torch.Tensor) -> int:
    """Entries of `A` whose sign (`> 0` or not) differs between consecutive grid points.

    Each is a step across a ReLU kink. A count that grows as the step is refined would mean
    chattering (an entry sliding along a kink), which the flow does not do: `dA/dp` is
    continuous, so entries cross zero transversally.

    Args:
        A_path: `[n + 1, N, w]`.
    """
    pos = A_path > 0
    return int((pos[1:] != pos[:-1]).sum())


def kink_free_start(
    A0: torch.Tensor, gen: torch.Generator, *, offset: float, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """A start whose path crosses no kink: `A = relu(A0) + offset > 0` with a small
    non-negative momentum `B = scale |G|` (`G` Gaussian). Then `K B >= 0` keeps `A` positive
    for moderate `scale` (check with `sign_crossings`).

    Args:
        A0: `[N, w]`
        gen: seeded generator
        offset: `> 0`
        scale: `>= 0`.
    Returns:
        `(A, B)`, `[N, w]` each, in the dtype of `A0`.
    """
    B = torch.randn(A0.shape, generator=gen, dtype=A0.dtype).abs()
    return torch.relu(A0) + offset, scale * B


def generic_start(
    A0: torch.Tensor, gen: torch.Generator, *, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """A generic start: `A0` itself (both signs) and a Gaussian momentum `scale G`.

    Args:
        A0: `[N, w]`
        gen: seeded generator
        scale: `> 0`.
    """
    return A0, scale * torch.randn(A0.shape, generator=gen, dtype=A0.dtype)


def drift_refinement(
    A0: torch.Tensor,
    B0: torch.Tensor,
    leak: float,
    steps: Sequence[int],
    *,
    field: Field = vector_field,
    series_points: int = 50,
    locate_kinks: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Integrate from `(A0, B0)` at each step count and measure the drift of `H`.

    Args:
        A0: initial representation `[N, w]`.
        B0: initial momentum `[N, w]`.
        leak: `L~`.
        steps: RK4 step counts (e.g. doubling).
        field: the vector field (`vector_field`; tests pass wrong ones).
        series_points: about this many grid points of each drift series are kept.
        locate_kinks: integrate with `hamiltonian_flow_located` (steps cut at every sign
            change; `crossings` is then the number of crossings located) instead of
            fixed-step `hamiltonian_flow`.
    Returns:
        `summary`: one row per step count, `{"steps": int, "drift": float (max over p),
        "drift_end": float (at p = 1, signed), "crossings": int}`;
        `series`: `{"steps": int, "p": float, "drift": float}` rows.
    """
    summary: list[dict[str, Any]] = []
    series: list[dict[str, Any]] = []
    H0 = float(hamiltonian(A0, B0, leak))
    for n in steps:
        if locate_kinks:
            A, B, crossings = hamiltonian_flow_located(A0, B0, leak, steps=n, field=field)
        else:
            A, B = hamiltonian_flow(A0, B0, leak, steps=n, field=field)
            crossings = sign_crossings(A)
        d = hamiltonian_drift(A, B, leak)  # [n + 1]
        H_end = float(hamiltonian(A[-1], B[-1], leak))
        summary.append(
            {
                "steps": int(n),
                "drift": float(d.max()),
                "drift_end": (H_end - H0) / abs(H0),
                "crossings": crossings,
            }
        )
        every = max(1, n // series_points)
        series.extend(
            {"steps": int(n), "p": i / n, "drift": float(v)}
            for i, v in enumerate(d.tolist())
            if i % every == 0 or i == n
        )
    return summary, series


def drift_ratios(summary: Sequence[dict[str, Any]]) -> list[float]:
    """The drift at each step count over the drift at the next (doubled) one, from
    `drift_refinement`'s `summary` rows sorted by steps (`inf` where the next drift is 0).
    RK4 on a kink-free path: about 16 per doubling (paper 000, §1.5 conservation)."""
    return [
        a["drift"] / b["drift"] if b["drift"] > 0 else math.inf
        for a, b in zip(summary, summary[1:])
    ]


def refinement_study(
    starts: dict[str, tuple[torch.Tensor, torch.Tensor, Sequence[int], bool]],
    leak: float,
    *,
    field: Field = vector_field,
) -> tuple[dict[str, float], list[dict[str, Any]], list[dict[str, Any]]]:
    """`drift_refinement` from several named starts (paper 000, §1.5 conservation).

    Args:
        starts: name -> `(A0 [N, w], B0 [N, w], step counts, locate_kinks)`.
        leak: `L~`; field: the vector field (tests pass wrong ones).
    Returns:
        scalars per name `path`: `H0_<path>`, `drift_<path>_<steps>` per step count,
        `crossings_<path>` (at the finest) and `order_ratio_<path>` (the last doubling's
        drift ratio, with two step counts or more); and the `summary` and `series` rows of
        every start with a `"path"` column.
    """
    scalars: dict[str, float] = {}
    refinement: list[dict[str, Any]] = []
    series: list[dict[str, Any]] = []
    for path, (A, B, steps, locate) in starts.items():
        summary, drift = drift_refinement(A, B, leak, steps, field=field, locate_kinks=locate)
        refinement.extend({"path": path, **row} for row in summary)
        series.extend({"path": path, **row} for row in drift)
        scalars[f"H0_{path}"] = float(hamiltonian(A, B, leak))
        for row in summary:
            scalars[f"drift_{path}_{row['steps']}"] = row["drift"]
        scalars[f"crossings_{path}"] = float(summary[-1]["crossings"])
        if len(summary) >= 2:
            scalars[f"order_ratio_{path}"] = summary[-2]["drift"] / summary[-1]["drift"]
    return scalars, refinement, series
