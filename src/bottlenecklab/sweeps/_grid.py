"""Grid expansion over dotted config keys and seeds (no science here: keys are strings)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["expand_grid"]


def expand_grid(
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int] | None = None,
    *,
    seed_key: str = "seed",
    order: str = "grid",
    order_seed: int = 0,
) -> list[dict[str, Any]]:
    """Every combination of `grid` values (and seeds) as a `{dotted key: value}` dict.

    Args:
        grid: dotted key -> list of values (`{"train.lam": [0.01, 0.02]}`); an empty grid
            gives one empty point.
        seeds: values of `seed_key` crossed with the grid (innermost), or `None`.
        order: `grid` (row-major, last key fastest) or `random` (shuffled with
            `order_seed`, reproducibly).
    Returns:
        One dict per point, keys in grid order then `seed_key`.
    """
    keys = list(grid)
    for key in keys:
        values = grid[key]
        if isinstance(values, str | bytes) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"grid key {key!r} needs a non-empty list of values, got {values!r}")
    axes = [list(grid[k]) for k in keys]
    if seeds is not None:
        if seed_key in grid:
            raise ValueError(f"{seed_key!r} is both a grid key and the seeds key")
        keys.append(seed_key)
        axes.append(list(seeds))
    points = [dict(zip(keys, combo)) for combo in itertools.product(*axes)]
    if order == "random":
        random.Random(order_seed).shuffle(points)
    elif order != "grid":
        raise ValueError(f"order must be 'grid' or 'random', got {order!r}")
    return points
