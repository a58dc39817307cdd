"""The one spectra schema of a run: singular values in long format, `k = 1` the largest.

Every writer of a run's `spectra` table builds its rows here (`spectrum_rows`,
`matrix_spectra`, `weight_spectra`) and every reader goes through `spectra_by_layer`
(or `gap_at` on top of it), so that no two places count singular values differently.

A row is `{"layer": l, "matrix": name, "index": k, "value": s_k}` (`SPECTRUM_COLUMNS`),
`l` 1-based, `k` 1-based with `s_1 >= s_2 >= ...`; a writer may add columns after these
(e.g. the order of a frequency, `frequency_spectra`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

__all__ = [
    "SPECTRUM_COLUMNS",
    "gap_at",
    "matrix_spectra",
    "one_based",
    "spectra_by_layer",
    "spectrum_rows",
    "weight_spectra",
]

SPECTRUM_COLUMNS = ("layer", "matrix", "index", "value")


def spectrum_rows(
    layer: int, matrix: str, values: Iterable[float], top: int | None = None, **extra: Any
) -> list[dict[str, Any]]:
    """The rows of one matrix's singular values.

    Args:
        layer: the layer `l` (1-based).
        matrix: the matrix's name (`"W"`, `"A"`, a frequency `"w1,w2"`).
        values: its singular values, largest first (`[n]`).
        top: keep the `top` largest (default all).
        extra: columns added to every row after the schema's.
    """
    vals = [float(v) for v in values]
    return [
        {"layer": layer, "matrix": matrix, "index": k, "value": v, **extra}
        for k, v in enumerate(vals[:top], start=1)
    ]


def matrix_spectra(
    matrices: Sequence[torch.Tensor], matrix: str = "W", top: int | None = None
) -> list[dict[str, Any]]:
    """The singular values (float64) of `matrices[l - 1]` `[m_l, n_l]` as layer `l`'s
    `matrix` rows, the `top` largest of each (default all)."""
    rows: list[dict[str, Any]] = []
    for l, M in enumerate(matrices, start=1):
        rows += spectrum_rows(l, matrix, torch.linalg.svdvals(M.detach().double()).tolist(), top)
    return rows


def weight_spectra(model: Any, top: int | None = None) -> list[dict[str, Any]]:
    """The singular values of every weight matrix `W_l` of `model` (its `weights`), the
    `top` largest of each (default all): rows `{"layer", "matrix": "W", "index", "value"}`."""
    return matrix_spectra(list(model.weights), "W", top)


def spectra_by_layer(spectra: Iterable[dict[str, Any]], matrix: str = "W") -> dict[int, np.ndarray]:
    """`layer -> [s_1, s_2, ...]` of `matrix` from spectra rows (layers in order; a
    missing index reads nan)."""
    sv: dict[int, dict[int, float]] = {}
    for s in spectra:
        if s["matrix"] == matrix:
            sv.setdefault(int(s["layer"]), {})[int(s["index"])] = float(s["value"])
    return {
        l: np.array([sv[l].get(k, np.nan) for k in range(1, max(sv[l]) + 1)]) for l in sorted(sv)
    }


def one_based(spectra: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spectra rows in this schema, from rows written before it (runs older than issue 42:
    `weight_spectra` counted from 0): each `(layer, matrix)` whose indices start at 0 is
    shifted by one; rows already 1-based are returned as they are."""
    zero = {(r["layer"], r["matrix"]) for r in spectra if int(r["index"]) == 0}
    if not zero:
        return list(spectra)
    return [
        {**r, "index": int(r["index"]) + 1} if (r["layer"], r["matrix"]) in zero else r
        for r in spectra
    ]


def gap_at(spectra: Iterable[dict[str, Any]], k: int, matrix: str = "W") -> np.ndarray:
    """`s_k / s_(k+1)` of every layer's `matrix` from spectra rows (`k` 1-based); a
    missing `s_k` reads 0, a missing or zero `s_(k+1)` as 1e-300. Paper 000, Fig 1b: `k*`
    singular values stand out in the bottleneck. Returns `[L]`, layers in order."""
    out = []
    for s in spectra_by_layer(spectra, matrix).values():
        sk = s[k - 1] if k - 1 < len(s) and np.isfinite(s[k - 1]) else 0.0
        s1 = s[k] if k < len(s) and np.isfinite(s[k]) else 0.0
        out.append(sk / max(s1, 1e-300))
    return np.array(out)
