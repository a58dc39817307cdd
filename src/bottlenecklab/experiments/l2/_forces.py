"""The measurement of `l2/attraction-repulsion` (paper 004, §3.1, Fig 1) and the quantities
it writes, declared once: per hidden layer `l` (`LAYERS`), the attraction `A_l` and
repulsion `R_l` and their balance on the feasible directions `T_l`, the rays the neurons
lie on, `Rank K_l` (`KERNEL_RANK_RULE`) and how the data points cluster by digit. Each
per-layer quantity is a family `{l: Quantity}` named `<key>_layer<l>` (`column`);
`FAMILIES` holds them by key.

    FORCES(model, data, cfg)  # -> Measurement with table `views`
"""

from __future__ import annotations

from typing import Any

import torch

from bottlenecklab import measure as M
from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.measure import GRAD_NORM, TRAIN_ACCURACY, Quantity, RankRule
from bottlenecklab.measure._forces import feasible_balance
from bottlenecklab.measure._reformulation import fcnn_forces, fcnn_layers
from bottlenecklab.measure._sparsity import KERNEL_RANK_RULE, kernel_rank, merge_neurons
from bottlenecklab.measure._views import (
    count_rays,
    count_rays_2d,
    nearest_centroid_accuracy,
    uncentered_pca,
)

__all__ = [
    "CENTROID_ACCURACY",
    "COS",
    "COS_REACTION",
    "COS_T",
    "COS_T_AT",
    "CUTS",
    "DIM_T",
    "FAMILIES",
    "FORCES",
    "LAYERS",
    "MERGED",
    "PROJ_A",
    "PROJ_A_AT",
    "RANK_K",
    "RAYS",
    "RAYS2D",
    "RESIDUAL",
    "RESIDUAL10",
    "column",
    "forces_measurement",
]

LAYERS = (1, 2)  # the hidden layers of Fig 1's depth-3 net (the experiment's `model.depth`)
CUTS = (3.0, 1.0, 10.0)  # the experiment's `cuts`: the asserted one, then the reported ones


def column(key: str, layer: int) -> str:
    """The summary column of quantity `key` at hidden layer `layer`: `<key>_layer<l>`."""
    return f"{key}_layer{layer}"


def _cos(A: torch.Tensor, R: torch.Tensor) -> float:
    return float((A * R).sum() / (A.norm() * R.norm()))


def forces_measurement(model: torch.nn.Module, data: Any, cfg: Any) -> Measurement:
    """Forces and their balance on `T_l`, PCA views, rays and clustering per hidden layer
    (float64 copy); table `views` (the rows and columns of each layer's 2-D PCA).

    Args:
        model: a trained `FCNN`; data: the digits (one-hot `y_train`).
        cfg: the experiment's config (`train`, `task.classes`, `ridge`, `cuts`,
            `ray_cosine`, `dead_rel`, `ray_mass`).
    """
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    labels = Y.argmax(dim=1)
    digits = cfg.task.classes or tuple(range(10))  # column -> digit, for the views
    lam = cfg.train.lam
    net = M.float64_copy(model)
    F = fcnn_forces(net, X, lam, cfg.ridge)
    F10 = fcnn_forces(net, X, lam, 10 * cfg.ridge)
    balance = feasible_balance(net, X, Y, lam, rel=cfg.ridge, cuts=cfg.cuts, cost=cfg.train.cost)
    with torch.no_grad():
        _, Z, W = fcnn_layers(net, X)
    _, merged = merge_neurons(net, X)
    scalars: dict[str, float] = {
        GRAD_NORM.name: M.gradient_norm(net, X, Y, lam, cost=cfg.train.cost),
        TRAIN_ACCURACY.name: float((Z[-1].argmax(1) == labels).double().mean()),
    }
    rows = []
    for l, ((A, R), (A10, R10), bal) in enumerate(zip(F, F10, balance), start=1):
        z = Z[l - 1]
        contrib = W[l - 1].norm(dim=1) * W[l][:, : z.shape[1]].norm(dim=0)
        c0 = f"c{cfg.cuts[0]:g}"
        scalars[column("cosT", l)] = bal[f"cos_T_{c0}"]
        scalars[column("projA", l)] = bal[f"proj_A_{c0}"]
        scalars[column("dimT", l)] = bal[f"dim_T_{c0}"]
        for c in cfg.cuts[1:]:
            scalars[column(f"cosT_c{c:g}", l)] = bal[f"cos_T_c{c:g}"]
            scalars[column(f"projA_c{c:g}", l)] = bal[f"proj_A_c{c:g}"]
        scalars[column("cos_reaction", l)] = bal["cos_reaction"]
        scalars[column("cos", l)] = _cos(A, R)
        scalars[column("residual", l)] = float((A + R).norm() / A.norm())
        scalars[column("residual10", l)] = float((A10 + R10).norm() / A10.norm())
        scalars[column("rays", l)] = float(count_rays(z, contrib, cfg.ray_cosine, cfg.dead_rel))
        scalars[column("rays2d", l)] = float(
            count_rays_2d(z, contrib, cfg.ray_cosine, cfg.ray_mass)
        )
        scalars[column("merged", l)] = float(merged[l - 1])
        scalars[column("rank_K", l)] = float(kernel_rank(z))
        B = uncentered_pca(z, "rows")
        P = z @ B
        scalars[column("centroid_accuracy", l)] = nearest_centroid_accuracy(P, labels)
        for i, (p, a, r) in enumerate(zip(P, -A @ B, -R @ B)):
            rows.append(
                {
                    "layer": l,
                    "view": "rows",
                    "index": i,
                    "label": digits[int(labels[i])],
                    "x": float(p[0]),
                    "y": float(p[1]),
                    "ax": float(a[0]),
                    "ay": float(a[1]),
                    "rx": float(r[0]),
                    "ry": float(r[1]),
                }
            )
        C = uncentered_pca(z, "columns")
        for i, (p, a, r) in enumerate(zip(z.T @ C, -A.T @ C, -R.T @ C)):
            rows.append(
                {
                    "layer": l,
                    "view": "columns",
                    "index": i,
                    "label": int(contrib[i] >= cfg.dead_rel * contrib.sum()),
                    "x": float(p[0]),
                    "y": float(p[1]),
                    "ax": float(a[0]),
                    "ay": float(a[1]),
                    "rx": float(r[0]),
                    "ry": float(r[1]),
                }
            )
    return Measurement(scalars=scalars, tables={"views": rows})


FAMILIES: dict[str, dict[int, Quantity]] = {}  # key -> {layer: quantity}
_NET = "a trained FCNN on the digits (float64 copy), hidden layer {l}"


def _family(
    key: str, doc: str, units: str, over: str = _NET, rule: RankRule | None = None
) -> dict[int, Quantity]:
    """`{l: Quantity(column(key, l), ...)}` for `l` in `LAYERS`, registered in `FAMILIES`."""
    family = {
        l: Quantity(
            column(key, l),
            doc,
            function=forces_measurement,
            over=over.format(l=l),
            units=units,
            rule=rule,
        )
        for l in LAYERS
    }
    FAMILIES[key] = family
    return family


_T = "the attraction A_l and repulsion R_l projected on the feasible directions T_l"
COS_T = _family(
    "cosT",
    f"cos(Pi_T A_l, Pi_T R_l): {_T}, column spaces cut at s^2 > {CUTS[0]:g} eps (paper 004, "
    "§3.1, Prop 1; spec Decision)",
    "cosine",
)
PROJ_A = _family(
    "projA", f"||Pi_T A_l|| / ||A_l|| at the cut {CUTS[0]:g} eps (not vacuous)", "relative"
)
DIM_T = _family("dimT", f"dim T_l at the cut {CUTS[0]:g} eps", "count")
COS_T_AT = {
    c: _family(f"cosT_c{c:g}", f"cos(Pi_T A_l, Pi_T R_l) at the cut {c:g} eps, reported", "cosine")
    for c in CUTS[1:]
}
PROJ_A_AT = {
    c: _family(f"projA_c{c:g}", f"||Pi_T A_l|| / ||A_l|| at the cut {c:g} eps", "relative")
    for c in CUTS[1:]
}
COS_REACTION = _family(
    "cos_reaction",
    "cosine of A_l + R_l with the constraint reaction N_l (paper 004, §3.1, derived)",
    "cosine",
)
COS = _family("cos", "cos(A_l, R_l), unprojected (paper 004, Fig 1)", "cosine")
RESIDUAL = _family("residual", "||A_l + R_l|| / ||A_l|| at the ridge eps", "relative")
RESIDUAL10 = _family("residual10", "||A_l + R_l|| / ||A_l|| at the ridge 10 eps", "relative")
RAYS = _family("rays", "rays of the alive neurons in full dimension (cosine > ray_cosine)", "count")
RAYS2D = _family(
    "rays2d",
    "rays in the 2-D uncentered PCA of the neurons: fewest groups holding ray_mass of "
    "sum ||w|| ||v|| (paper 004, Fig 1: 3)",
    "count",
)
MERGED = _family("merged", "neurons after merging positively proportional ones", "count")
RANK_K = _family(
    "rank_K",
    "Rank K_l of the layer's kernel (paper 004, Lemma 10), reported",
    "rank",
    rule=KERNEL_RANK_RULE,
)
CENTROID_ACCURACY = _family(
    "centroid_accuracy",
    "2-D nearest-centroid accuracy of the data points by digit (paper 004, Fig 1)",
    "relative",
)
FORCES = Measure(
    forces_measurement,
    (GRAD_NORM, TRAIN_ACCURACY, *(q for family in FAMILIES.values() for q in family.values())),
)
