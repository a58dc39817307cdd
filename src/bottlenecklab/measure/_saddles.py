"""Saddle-to-saddle diagnostics of a trained bias-free network (paper 003): per-layer
low-rank measures, weak balancedness, plateau/escape detection on a loss curve, and the
gap between training paths of `theta / ||theta||`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from bottlenecklab.measure._costs import float64_copy
from bottlenecklab.theory import layer_profile
from bottlenecklab.theory import weak_balancedness as _weak_balancedness

__all__ = [
    "direction_gaps",
    "escape_step",
    "fcnn_weak_balancedness",
    "fcnn_weights",
    "loss_drops",
    "saddle_layers",
]


def fcnn_weights(model: Any) -> list[torch.Tensor]:
    """Float64 CPU copies of the weight matrices `W_l` `[n_l, n_{l-1}]` of an `FCNN`."""
    net = float64_copy(model)
    return [W.detach() for W in net.weights]


def saddle_layers(model: Any, X: Any, floor: float = 1e-10) -> list[dict[str, float]]:
    """`theory.layer_profile` of a trained bias-free network on inputs `X` `[N, d_in]`
    (float64 copy): `tail`, `s_2/s_1` of `W_l` and `Z^s_l`, nonlinearity (paper 003,
    Thm 3.1)."""
    X64 = torch.as_tensor(X, dtype=torch.float64)
    return layer_profile(X64, fcnn_weights(model), floor)


def fcnn_weak_balancedness(model: Any) -> list[np.ndarray]:
    """`b_l` per hidden neuron, `[n_l]` for `l = 1..L-1` (paper 003, Sec 5;
    `theory.weak_balancedness` on a float64 copy)."""
    return [b.numpy() for b in _weak_balancedness(fcnn_weights(model))]


def escape_step(steps: Sequence[float], losses: Sequence[float], frac: float = 0.9) -> float:
    """First logged step whose loss is at most `frac * losses[0]` (the end of the first
    plateau; spec `saddles.md`: `frac = 0.9`); `nan` if the loss never gets there."""
    loss = np.asarray(losses, dtype=np.float64)
    hit = np.flatnonzero(loss <= frac * loss[0])
    return float(steps[int(hit[0])]) if hit.size else math.nan


def direction_gaps(paths: Sequence[dict[int, np.ndarray]], until: int) -> dict[int, float]:
    """The largest `||theta_bar_k(i) - theta_bar_k(j)||` over pairs of paths at every step
    `k <= until` logged in all of them (paper 003, Sec 2.1: in the time `tau` the path of
    `theta_bar = theta / ||theta||` does not depend on the init scale).

    Args:
        paths: per run, step `k` -> `theta_bar_k` `[P]`.
        until: last step compared.
    """
    common = set.intersection(*(set(p) for p in paths)) if paths else set()
    return {
        k: max(
            (
                float(np.linalg.norm(a[k] - b[k]))
                for i, a in enumerate(paths)
                for b in paths[i + 1 :]
            ),
            default=0.0,
        )
        for k in sorted(common)
        if k <= until
    }


def loss_drops(
    steps: Sequence[float],
    losses: Sequence[float],
    *,
    smooth: int | None = None,
    rise: float = 0.2,
    fall: float = 0.05,
    min_fall: float = 0.0,
) -> dict[str, Any]:
    """Saddle-to-saddle drops of a (noisy) loss curve and the plateaus between them.

    The loss is smoothed by a centred running mean of `smooth` logged points (default
    `max(3, K // 50)`); its decrease rate `r_k = -(l_{k+h} - l_{k-h}) / (t_{k+h} - t_{k-h})`
    (`h = smooth // 2`, clipped at the ends) is compared with its maximum `r_max`. A
    drop is a maximal run of points with `r_k >= fall * r_max` that contains a point with
    `r_k >= rise * r_max`; drops separated by fewer than one point below `fall * r_max` are
    one drop. A drop counts only if the smoothed loss falls across it (from the first to
    the last smoothed point its rates span) by at least `min_fall`, in the loss's units:
    the rates alone are scale-free, so on a curve without a drop the noise sets `r_max`
    and its wiggles would count. The flattest point between drops `i` and `i + 1` is the
    smallest `r_k` there; sharpness of a drop is its peak rate over the mean rate of the
    plateau before it.

    Args: `steps` `[K]`, `losses` `[K]` (logged values); `min_fall` (`>= 0`). Returns
    `{"drops": [(start, peak, end) steps], "flattest": [steps between consecutive drops],
    "sharpness": [per drop], "falls": [smoothed loss decrease per drop]}`.
    """
    t = np.asarray(steps, dtype=np.float64)
    loss = np.asarray(losses, dtype=np.float64)
    if loss.size < 3:
        return {"drops": [], "flattest": [], "sharpness": [], "falls": []}
    K = loss.size
    h = max(1, (smooth if smooth is not None else max(3, K // 50)) // 2)
    csum = np.concatenate([[0.0], np.cumsum(loss)])
    lo, hi = np.maximum(np.arange(K) - h, 0), np.minimum(np.arange(K) + h + 1, K)
    sm = (csum[hi] - csum[lo]) / (hi - lo)
    a, b = lo[:-1], np.minimum(np.arange(K - 1) + h + 1, K - 1)
    rate = -(sm[b] - sm[a]) / np.maximum(t[b] - t[a], 1e-300)  # [K-1], at t[k]
    rmax = float(rate.max())
    if not rmax > 0:
        return {"drops": [], "flattest": [], "sharpness": [], "falls": []}
    active = rate >= fall * rmax
    runs, falls, k = [], [], 0
    while k < rate.size:
        if active[k]:
            j = k
            while j + 1 < rate.size and active[j + 1]:
                j += 1
            fell = sm[max(k - h, 0)] - sm[min(j + h + 1, K - 1)]
            if rate[k : j + 1].max() >= rise * rmax and fell >= min_fall:
                runs.append((k, j))
                falls.append(float(fell))
            k = j + 1
        else:
            k += 1
    drops, flattest, sharp = [], [], []
    prev_end = 0
    for a, b in runs:
        peak = a + int(np.argmax(rate[a : b + 1]))
        drops.append((float(t[a]), float(t[peak]), float(t[b + 1])))
        plateau = rate[prev_end:a] if a > prev_end else rate[a : a + 1]
        flat = float(np.abs(plateau).mean())  # 0 on a float32 plateau: infinitely sharp
        sharp.append(float(rate[peak] / flat) if flat > 0 else math.inf)
        prev_end = b + 1
    for (_, b), (a2, _) in zip(runs[:-1], runs[1:]):
        seg = rate[b + 1 : a2]
        k = b + 1 + int(np.argmin(seg)) if seg.size else b + 1
        flattest.append(float(t[k]))
    return {"drops": drops, "flattest": flattest, "sharpness": sharp, "falls": falls}
