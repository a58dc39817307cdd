"""The measurement of `fcnn/symmetry-dynamics` (paper 001, §5 and Fig 2) and the
quantities it writes, declared once (only that experiment reads them, so they live with
its area, not on the `measure` face).

`SYMMETRY` is the experiment's `measure`: on one trained net (and its untrained
initialization) the per-layer gaps, ranks and state metric (table `layers`, spectra), the
2-D state at `l = ceil(pca_fraction L)`, crossings of the test paths, the rotation ratios
and the layer-2 heat map (tables `heat_map`, `pca_paths`). Claims read its quantities by
object: `point.value(STATE_R2)`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import (
    AFFINE_RANK_RULE,
    LOSS,
    TRAIN_COST,
    Quantity,
    costs,
    regularized_loss,
    weight_spectra,
)
from bottlenecklab.measure._costs import DATA_COSTS
from bottlenecklab.measure._jacobian import JACOBIAN_RANK_RULE
from bottlenecklab.measure._symmetry import (
    crossing_counts,
    gap_rank_rows,
    invariant_coordinates,
    layer_distance_map,
    layer_state_r2,
    random_projection_crossings,
    rotation_ratio,
    step_r2,
)
from bottlenecklab.tasks import Dataset, gd_path

__all__ = [
    "FAR_CROSSINGS",
    "FAR_CROSSINGS_INIT",
    "FAR_CROSSING_RATIO",
    "GAP_LAYER",
    "MIDDLE_CENTRED_RANK",
    "MIDDLE_GAP_LAYERS",
    "MIDDLE_JACOBIAN_RANK",
    "MIDDLE_LAYERS",
    "OUTPUT_JACOBIAN_RANK",
    "PCA_CROSSINGS",
    "PCA_CROSSINGS_INIT",
    "PCA_LAYER",
    "RANDOM_CROSSINGS",
    "REG_LOSS",
    "RELATIVE_TRAIN_COST",
    "ROTATION_RATIO",
    "ROTATION_RATIO_LAYER2",
    "STATE_R2",
    "STATE_R2_INIT",
    "STEP_R2",
    "SYMMETRY",
    "U_CROSSINGS",
    "middle_rows",
    "symmetry_measurement",
]


def middle_rows(layers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of the middle-third layers `L/3 < l <= 2L/3` of a layer table."""
    L = len(layers)
    return [r for r in layers if L / 3 < r["layer"] <= 2 * L / 3]


def symmetry_measurement(model: torch.nn.Module, data: Dataset, cfg: Any) -> Measurement:
    """Per-layer gaps, ranks and state metric (trained and untrained; table `layers`,
    spectra), the 2-D state at `l = ceil(0.24 L)`, crossings, rotation ratios, heat map.

    Args:
        model: the trained FCNN; data: its `symmetry_dynamics` data set (`info`: `w`,
            `E`, `eta`, `steps`); cfg: the experiment's `Config`.
    """
    L = model.depth
    scalars = costs(model, data)
    total_var = float(data.y_train.var(axis=0).sum())
    scalars["relative_train_cost"] = scalars[TRAIN_COST.name] / total_var
    scalars["reg_loss"] = regularized_loss(
        model, data.x_train, data.y_train, cfg.train.lam, cfg.train.cost
    )[LOSS.name]
    dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
    init = cfg.model.build(data.d_in, data.d_out, seed=cfg.seed + 1, dtype=dtype)  # untrained
    w, E, eta, T = (data.info[k] for k in ("w", "E", "eta", "steps"))
    w = np.array(w)
    fit = gd_path(data.x_train, w, np.array(E), eta, T)  # [M, T+1, d]: PCA, k-NN fitted
    V = data.x_test[: cfg.n_paths]
    test = gd_path(V, w, np.array(E), eta, T)  # [P, T+1, d]: evaluated
    u_test = invariant_coordinates(test, w)
    pca_layer = math.ceil(cfg.pca_fraction * L)
    state_rows, states = layer_state_r2(
        model, init, fit, test, invariant_coordinates(fit, w), u_test, cfg.knn, pca_layer
    )
    layers = [
        row | (state_rows[l] if l < L - 1 else {})
        for l, row in enumerate(gap_rank_rows(model, data.x_train))
    ]
    middle = middle_rows(layers)
    good = [r for r in layers if r["gap_index"] == cfg.gap_rank and r["gap"] >= cfg.min_gap]
    scalars["middle_layers"] = float(len(middle))
    scalars["middle_gap_layers"] = float(sum(r in middle for r in good))
    scalars["middle_jacobian_rank"] = max(r["jacobian_rank"] for r in middle)
    scalars["middle_centred_rank"] = max(r["centred_rank"] for r in middle)
    scalars["output_jacobian_rank"] = layers[-1]["jacobian_rank"]  # Rank Jf(x), median
    scalars["pca_layer"] = float(pca_layer)
    scalars |= state_rows[pca_layer - 1]  # state_r2, state_r2_init at the PCA layer
    (z_fit, z_test), (_, zi_test) = states["trained"], states["init"]
    scalars |= crossing_counts(z_test, zi_test, u_test, cfg.apart)
    gen = torch.Generator().manual_seed(cfg.seed + 7)
    scalars["random_crossings"] = random_projection_crossings(test, gen, cfg.n_random)
    scalars["step_r2"] = step_r2(z_fit, z_test, cfg.knn)
    first = good[0]["layer"] if good else None  # alpha_l of the first gap layer
    scalars["gap_layer"] = float(first) if first is not None else math.nan
    ok = first is not None and first < L
    scalars["rotation_ratio"] = (
        float(rotation_ratio(model, first, V, w, gen).median()) if ok else math.nan
    )
    scalars["rotation_ratio_layer2"] = float(rotation_ratio(model, 2, V, w, gen).median())
    coords, dist = layer_distance_map(
        model, 2, w, cfg.map_height, cfg.task.r_max, cfg.map_resolution, gen
    )
    n, P = range(len(coords)), range(z_test.shape[0])
    heat = [
        {"a": float(coords[i]), "b": float(coords[j]), "distance": float(dist[i, j])}
        for i in n
        for j in n
    ]
    pca = [
        {"path": p, "t": t, "x": float(z_test[p, t, 0]), "y": float(z_test[p, t, 1])}
        for p in P
        for t in range(z_test.shape[1])
    ]
    return Measurement(
        scalars=scalars,
        layers=layers,
        spectra=weight_spectra(model),
        tables={"heat_map": heat, "pca_paths": pca},
    )


_NET = "a trained FCNN on the symmetry_dynamics task"
_MIDDLE = "the middle-third layers L/3 < l <= 2L/3 of a trained FCNN"
_PCA = "the test paths' 2-D state (top-2 PCA of alpha_l, l = ceil(pca_fraction L))"


def _q(name: str, doc: str, over: str, units: str, **kw: Any) -> Quantity:
    return Quantity(name, doc, function=symmetry_measurement, over=over, units=units, **kw)


RELATIVE_TRAIN_COST = _q(
    "relative_train_cost",
    "the training cost over the outputs' total variance sum_j Var(y_j)",
    "the training set (float64 copy)",
    "relative",
)
REG_LOSS = _q(
    "reg_loss",
    "the regularized training loss C + lam ||theta||^2 (paper 001, Eq. 1)",
    "the training set and the parameters",
    "the cost's units",
)
MIDDLE_LAYERS = _q("middle_layers", "the number of middle-third layers", _MIDDLE, "count")
MIDDLE_GAP_LAYERS = _q(
    "middle_gap_layers",
    "middle-third layers whose W_l has its largest gap s_i/s_(i+1) at i = gap_rank, "
    ">= min_gap (paper 001, Fig 2; the gap searched above s_i > 1e-3 s_1, `largest_gap`)",
    _MIDDLE,
    "count",
)
MIDDLE_JACOBIAN_RANK = _q(
    "middle_jacobian_rank",
    "the largest over the middle third of the median over inputs of Rank d a~_l/dx "
    "(paper 001's rank)",
    _MIDDLE + ", on the training inputs",
    "rank",
    rule=JACOBIAN_RANK_RULE,
)
MIDDLE_CENTRED_RANK = _q(
    "middle_centred_rank",
    "the largest over the middle third of the affine dimension of a~_l(X)",
    _MIDDLE + ", centred pre-activations on the training inputs",
    "rank",
    rule=AFFINE_RANK_RULE,
)
OUTPUT_JACOBIAN_RANK = _q(
    "output_jacobian_rank",
    "the median over inputs of Rank Jf(x) (paper 001's rank of the output Jacobian)",
    _NET + ", on the training inputs",
    "rank",
    rule=JACOBIAN_RANK_RULE,
)
PCA_LAYER = _q(
    "pca_layer", "the layer l = ceil(pca_fraction L) of the 2-D state", _NET, "layer index"
)
STATE_R2 = _q(
    "state_r2",
    "smallest held-out k-NN R^2 of z -> u and u -> z at the PCA layer (paper 001, §5: "
    "the state and u determine each other)",
    _PCA + " against u = ((w^T v)^2, ||(I - w w^T) v||^2), trained net",
    "R^2",
)
STATE_R2_INIT = _q(
    "state_r2_init",
    "the same state metric on the net's untrained initialization",
    _PCA + ", untrained net",
    "R^2",
)
FAR_CROSSINGS = _q(
    "far_crossings",
    "crossings in the PCA plane between test paths whose u-curves are > apart sd apart",
    _PCA + ", trained net",
    "count",
)
FAR_CROSSINGS_INIT = _q(
    "far_crossings_init",
    "the same crossings on the untrained initialization",
    _PCA + ", untrained net",
    "count",
)
FAR_CROSSING_RATIO = _q(
    "far_crossing_ratio",
    "far crossings, trained over untrained (nan when the untrained net has none)",
    _PCA,
    "ratio",
)
PCA_CROSSINGS = _q(
    "pca_crossings", "all crossings of the test paths in the PCA plane", _PCA, "count"
)
PCA_CROSSINGS_INIT = _q(
    "pca_crossings_init",
    "all crossings in the PCA plane of the untrained initialization",
    _PCA + ", untrained net",
    "count",
)
U_CROSSINGS = _q(
    "u_crossings",
    "crossings of the test paths' exact u-curves",
    "the test paths' invariant coordinates u (no network)",
    "count",
)
RANDOM_CROSSINGS = _q(
    "random_crossings",
    "mean crossings of the input paths v(t) under random orthonormal 2-D projections",
    "the test paths (no network), n_random projections",
    "count",
)
STEP_R2 = _q(
    "step_r2",
    "held-out k-NN R^2 of z(t) -> z(t+1) - z(t), the smaller coordinate (paper 001, §5)",
    _PCA,
    "R^2",
)
GAP_LAYER = _q(
    "gap_layer",
    "the first layer whose W_l has the gap at i = gap_rank (nan: none)",
    _NET,
    "layer index",
)
ROTATION_RATIO = _q(
    "rotation_ratio",
    "median ||a(Qv) - a(v)|| / ||a(v + delta) - a(v)|| at the first gap layer (Q a rotation "
    "about w; spec fcnn/symmetry-dynamics)",
    _NET + ", the test inputs",
    "ratio",
)
ROTATION_RATIO_LAYER2 = _q(
    "rotation_ratio_layer2",
    "the same median rotation ratio at layer 2",
    _NET + ", the test inputs",
    "ratio",
)

SYMMETRY = Measure(
    symmetry_measurement,
    (
        *DATA_COSTS,
        RELATIVE_TRAIN_COST,
        REG_LOSS,
        MIDDLE_LAYERS,
        MIDDLE_GAP_LAYERS,
        MIDDLE_JACOBIAN_RANK,
        MIDDLE_CENTRED_RANK,
        OUTPUT_JACOBIAN_RANK,
        PCA_LAYER,
        STATE_R2,
        STATE_R2_INIT,
        FAR_CROSSINGS,
        FAR_CROSSINGS_INIT,
        FAR_CROSSING_RATIO,
        PCA_CROSSINGS,
        PCA_CROSSINGS_INIT,
        U_CROSSINGS,
        RANDOM_CROSSINGS,
        STEP_R2,
        GAP_LAYER,
        ROTATION_RATIO,
        ROTATION_RATIO_LAYER2,
    ),
)
