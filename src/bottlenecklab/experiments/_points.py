"""An experiment's grid as run requests: one resolved config (and one run id) per point."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from bottlenecklab.config import ConfigError, apply_overrides, config_hash, to_dict
from bottlenecklab.experiments._spec import Experiment
from bottlenecklab.sweeps import RunRequest

__all__ = ["expand_points", "point_id", "point_requests", "run_config"]


def expand_points(
    exp: Experiment, cfg: Any, fixed: Mapping[str, Any] | None = None
) -> list[tuple[dict[str, Any], Any]]:
    """The grid: one `(point values, point config)` per combination, in grid order.

    `fixed` pins grid keys to one value (a sweep that sets `model.leak` itself).
    """
    fixed = dict(fixed or {})
    keys = list(exp.grid)
    value_lists = [(fixed[k],) if k in fixed else _grid_values(cfg, exp.grid[k]) for k in keys]
    points = []
    for combo in itertools.product(*value_lists):
        point = dict(zip(keys, combo))
        points.append((point, apply_overrides(cfg, point) if point else cfg))
    return points


def _grid_values(cfg: Any, field: str) -> tuple[Any, ...]:
    value = getattr(cfg, field)
    if not isinstance(value, tuple) or not value:
        raise ConfigError(f"{field!r} must be a non-empty list of values")
    return value


def run_config(exp: Experiment, pcfg: Any) -> dict[str, Any]:
    """The resolved config of one run: the point's config without the grid's value lists
    (they describe the experiment, not the run)."""
    data = to_dict(pcfg)
    for field in exp.grid.values():
        data.pop(field, None)
    return data


def point_id(exp: Experiment, pcfg: Any) -> str:
    """The run id of a point: the hash of its resolved config (`run_config`)."""
    return config_hash(run_config(exp, pcfg))


def point_requests(
    exp: Experiment,
    cfg: Any,
    labels: Mapping[str, Any] | None = None,
    *,
    fixed: Mapping[str, Any] | None = None,
    repeat: int = 0,
) -> list[RunRequest]:
    """A `RunRequest` per grid point of `exp` at `cfg` (labels: sweep values + the point).

    `repeat > 0` gives distinct runs of the same config (`<id>-r<repeat>`).
    """
    out = []
    for point, pcfg in expand_points(exp, cfg, fixed):
        rid = point_id(exp, pcfg) + (f"-r{repeat}" if repeat else "")
        out.append(
            RunRequest(
                run_id=rid,
                config=run_config(exp, pcfg),
                labels={**dict(labels or {}), **point},
                payload={"experiment": exp.name, "point": point},
            )
        )
    return out
