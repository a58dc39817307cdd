"""`||theta||^2` against depth per middle-rank group (paper 001, Fig 1 and §1.1): in a
group of equal rank `k`, `R(f; L) ~ L k + R1`, so the fitted slope estimates the rank and
the intercept the regularity `R1`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import spearmanr

from bottlenecklab.measure._fits import fit_line

__all__ = [
    "collapse_margin",
    "largest_depth_share",
    "rank_depth_correlation",
    "rank_group_fits",
]


def rank_group_fits(
    depths: Sequence[float],
    norm_sq: Sequence[float],
    ranks: Sequence[int],
    *,
    min_depths: int = 3,
    min_span: float = 6.0,
) -> list[dict[str, float]]:
    """Least-squares line `||theta||^2 ~ slope L + intercept` for each middle-rank group.

    Args:
        depths: one entry per trained network: its depth `L`.
        norm_sq: one entry per trained network: its `||theta||^2`.
        ranks: one entry per trained network: its middle rank.
        min_depths: a group is `fitted` when it has at least this many distinct depths...
        min_span: ...spanning at least this many layers (`max L - min L`).
    Returns:
        One dict per rank (sorted): `rank`, `n` (networks), `n_depths`, `span`, `slope`,
        `intercept` (`nan` when fewer than 2 distinct depths), `fitted` (1.0 or 0.0).
    """
    L = np.asarray(depths, dtype=float)
    y = np.asarray(norm_sq, dtype=float)
    r = np.asarray(ranks, dtype=int)
    out = []
    for k in sorted(set(r.tolist())):
        sel = r == k
        distinct = np.unique(L[sel])
        slope, intercept = fit_line(L[sel], y[sel])
        span = float(distinct.max() - distinct.min())
        out.append(
            {
                "rank": float(k),
                "n": float(sel.sum()),
                "n_depths": float(distinct.size),
                "span": span,
                "slope": slope,
                "intercept": intercept,
                "fitted": float(distinct.size >= min_depths and span >= min_span),
            }
        )
    return out


def rank_depth_correlation(depths: Sequence[float], ranks: Sequence[float]) -> float:
    """Spearman correlation of middle rank with depth (`nan` for constant inputs)."""
    if len(set(depths)) < 2 or len(set(ranks)) < 2:
        return float("nan")
    return float(spearmanr(depths, ranks).statistic)


def collapse_margin(depths: Sequence[float], fits: Sequence[bool]) -> tuple[float, float, float]:
    """Where training stops fitting as depth grows (paper 001, Fig 1: too deep nets fit
    no longer): `(collapse, top, margin)` with `collapse` the smallest depth of a network
    that does not fit (`inf`: all fit), `top` the largest depth where every network fits
    (`nan`: none) and `margin = collapse - top` (`> 0`: the collapse lies above; `nan`
    without such a depth).

    Args:
        depths: one entry per trained network: its depth `L`.
        fits: one entry per trained network: whether it fits.
    """
    all_fit = [L for L in set(depths) if all(f for d, f in zip(depths, fits) if d == L)]
    top = max(all_fit) if all_fit else math.nan
    collapse = min((d for d, f in zip(depths, fits) if not f), default=math.inf)
    return collapse, top, (collapse - top if all_fit else math.nan)


def largest_depth_share(depths: Sequence[float], hits: Sequence[bool]) -> float:
    """The largest share, over the depths, of the networks of that depth with `hits`
    (e.g. fitting with middle rank `k*`, paper 001 Fig 1); 0 without networks."""
    share = 0.0
    for L in sorted(set(depths)):
        at = [h for d, h in zip(depths, hits) if d == L]
        share = max(share, sum(at) / len(at))
    return share
