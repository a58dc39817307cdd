"""Sweep spec files (YAML): what to run, the grid, the seeds, the options.

    experiment: leaky-resnet/hamiltonian-vs-depth   # or  base: runs/x/config.json
    preset: smoke                                  # with `experiment` (default quick)
    set: {model.width: 8}                          # base overrides, dotted keys
    grid: {train.lam: [0.01, 0.02]}                # dotted key -> values
    seeds: [0, 1]                                  # or a count (3 = 0, 1, 2)
    options: {order: random, repeats: 1, jobs: 2, threads: 1, gpus_per_run: 0.25, ensemble: 8}

Only the form is checked here; the keys are checked against the config by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["SpecError", "SweepSpec", "load_spec"]

_TOP = ("experiment", "preset", "base", "set", "grid", "seeds", "options")
_OPTIONS = {
    "order": str,
    "order_seed": int,
    "repeats": int,
    "jobs": int,
    "threads": int,
    "gpus_per_run": float,
    "max_retries": int,
    "device": str,
    "ensemble": int,
}


class SpecError(ValueError):
    """A sweep file that cannot be used (message is one line)."""


@dataclass(frozen=True)
class SweepSpec:
    """A parsed sweep file.

    Args:
        experiment: registered experiment name (or `None` when `base` is given).
        preset: the experiment's preset. base: a run's `config.json` to start from.
        overrides: dotted-key overrides of the base config. grid: dotted key -> values.
        seeds: seeds crossed with the grid, or `None` (the config's own seed).
        order: `grid` or `random` (shuffled with `order_seed`). repeats: runs per point.
        jobs, threads, gpus_per_run, max_retries, device: executor defaults (the command
            line wins).
        ensemble: train same-shape runs in ensembles of up to this many first (0 = off).
    """

    experiment: str | None = None
    preset: str = "quick"
    base: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] | None = None
    order: str = "grid"
    order_seed: int = 0
    repeats: int = 1
    jobs: int | None = None
    threads: int = 1
    gpus_per_run: float = 0.0
    max_retries: int = 3
    device: str = "auto"
    ensemble: int = 0


def _mapping(value: Any, what: str, path: Path) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise SpecError(f"{path}: {what} must be a mapping of dotted keys to values")
    return dict(value)


def _seeds(value: Any, path: Path) -> list[int] | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return list(range(value))
    if (
        isinstance(value, list)
        and value
        and all(isinstance(s, int) and not isinstance(s, bool) for s in value)
    ):
        return list(value)
    raise SpecError(f"{path}: seeds must be a positive count or a list of integers")


def _options(value: Any, path: Path) -> dict[str, Any]:
    opts = _mapping(value, "options", path)
    out: dict[str, Any] = {}
    for key, v in opts.items():
        if key not in _OPTIONS:
            raise SpecError(f"{path}: unknown option {key!r}; valid: {', '.join(_OPTIONS)}")
        kind = _OPTIONS[key]
        ok = isinstance(v, kind) or (kind is float and isinstance(v, int))
        if not ok or isinstance(v, bool):
            raise SpecError(f"{path}: option {key!r} expects {kind.__name__}, got {v!r}")
        out[key] = kind(v)
    if out.get("order", "grid") not in ("grid", "random"):
        raise SpecError(f"{path}: option 'order' must be grid or random, got {out['order']!r}")
    for key in ("repeats", "jobs", "threads"):
        if key in out and out[key] < 1:
            raise SpecError(f"{path}: option {key!r} must be >= 1, got {out[key]}")
    if out.get("ensemble", 0) < 0 or out.get("ensemble") == 1:
        raise SpecError(f"{path}: option 'ensemble' must be 0 (off) or >= 2, got {out['ensemble']}")
    return out


def load_spec(path: Path) -> SweepSpec:
    """Read and check the form of a sweep file; `SpecError` with one line otherwise."""
    path = Path(path)
    if path.is_dir():
        raise SpecError(f"{path} is a folder, not a sweep file")
    if not path.is_file():
        raise SpecError(f"sweep file {path} not found")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a text (YAML) file") from None
    except OSError as e:
        raise SpecError(f"sweep file {path} cannot be read ({e.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SpecError(f"{path}: not valid YAML{where}") from None
    if not isinstance(data, Mapping):
        raise SpecError(f"{path}: expected a mapping with keys {', '.join(_TOP)}")
    unknown = [k for k in data if k not in _TOP]
    if unknown:
        raise SpecError(f"{path}: unknown key(s) {unknown}; valid keys: {', '.join(_TOP)}")
    experiment, base = data.get("experiment"), data.get("base")
    if (experiment is None) == (base is None):
        raise SpecError(f"{path}: give exactly one of 'experiment' (a name) or 'base' (a file)")
    if experiment is not None and not isinstance(experiment, str):
        raise SpecError(f"{path}: 'experiment' must be a name, got {experiment!r}")
    base_path = None
    if base is not None:
        if not isinstance(base, str):
            raise SpecError(f"{path}: 'base' must be the path of a run's config.json")
        base_path = Path(base) if Path(base).is_absolute() else path.parent / base
    grid = _mapping(data.get("grid"), "grid", path)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SpecError(f"{path}: grid key {key!r} needs a non-empty list of values")
    preset = data.get("preset", "quick")
    if not isinstance(preset, str):
        raise SpecError(f"{path}: 'preset' must be a name, got {preset!r}")
    return SweepSpec(
        experiment=experiment,
        preset=preset,
        base=base_path,
        overrides=_mapping(data.get("set"), "set", path),
        grid=grid,
        seeds=_seeds(data.get("seeds"), path),
        **_options(data.get("options"), path),
    )
