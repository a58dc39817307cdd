"""Escape directions of paper 003, measured without training: the optimal escape speeds
of the circle and a small teacher over depths (`escape_measurement`, `saddle/escape-vs-depth`)
and of the circle over hidden widths (`circle_measurement`, `saddle/circle-escape`), with
the quantities each writes. `cfg` is the experiment's `Config` (a `SolverConfig`).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from bottlenecklab.experiments._spec import Measure, Measurement
from bottlenecklab.experiments.saddle._common import RANK1
from bottlenecklab.measure import Quantity, loglog_slope
from bottlenecklab.measure._spectra import matrix_spectra
from bottlenecklab.theory import (
    circle_inputs,
    circle_rank2_weights,
    circle_speed,
    circle_width1_loss,
    circle_width1_optimum,
    circle_width1_speed,
    cost_gradient_at_zero,
    escape_directions,
    escape_low_rank_bound,
    escape_low_rank_budget,
    escape_low_rank_constant,
    extend_depth,
    layer_profile,
    linear_escape_speed,
    singular_ratio,
)

__all__ = [
    "BEST",
    "CIRCLE",
    "CONSTRUCTION",
    "DEAD",
    "EQ6_ERROR",
    "EQ6_PI8",
    "EQ6_QUARTER_ERROR",
    "ESCAPES",
    "FRACTION",
    "KKT_BEST",
    "LINEAR_ERROR",
    "PROBLEMS",
    "RATIO_W",
    "RATIO_W1_BEST",
    "RATIO_W2_BEST",
    "SIGMA1_GX",
    "SPEED",
    "TAIL_W",
    "TAIL_Z",
    "THM31_C",
    "WIDTH1_GRID",
    "WIDTH1_GRID_PHI",
    "circle_measurement",
    "escape_measurement",
]

PROBLEMS = ("circle", "teacher")  # the depth sweep's problems (003 Example 1, a teacher)


def _problems(cfg: Any) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    data = cfg.teacher.build(seed=cfg.seed)
    X = torch.as_tensor(data.x_train, dtype=torch.float64)
    Y = torch.as_tensor(data.y_train, dtype=torch.float64)
    return {"circle": circle_inputs(), "teacher": (X, cost_gradient_at_zero(Y, "mse"))}


def escape_measurement(model: None, data: None, cfg: Any) -> Measurement:
    """Cold and warm escape directions per depth, Prop 3.4 per restart, the layer profile
    of the best deepest direction, the linear baseline."""
    rows: list[dict[str, Any]] = []
    profile: list[dict[str, Any]] = []
    scalars: dict[str, float] = {}
    for p_i, (name, (X, G)) in enumerate(_problems(cfg).items()):
        prev = None
        best_w, best_s = None, -math.inf
        for d_i, L in enumerate(cfg.depths):
            kw = dict(restarts=cfg.restarts, steps=cfg.steps, lr=cfg.lr, lr_end=cfg.lr_end)
            runs = {
                "cold": escape_directions(
                    X, G, [cfg.width] * (L - 1), seed=cfg.seed * 1000 + 100 * p_i + d_i, **kw
                )
            }
            if prev is not None and len(prev) == L - 1:
                runs["warm"] = escape_directions(
                    X, G, [cfg.width] * (L - 1), init=extend_depth(X, G, prev, 1), **kw
                )
            best_L = -math.inf
            for start, res in runs.items():
                lhs, rhs, _ = escape_low_rank_budget(X, G, res.weights)
                for r in range(cfg.restarts):
                    rows.append(
                        {
                            "problem": name,
                            "depth": L,
                            "start": start,
                            "restart": r,
                            "speed": float(res.speed[r]),
                            "kkt": float(res.kkt[r]),
                            "prop34_lhs": float(lhs[r]),
                            "prop34_rhs": float(rhs[r]),
                        }
                    )
                scalars[SPEED[name, start].at(L).name] = float(res.speed.max())
                if float(res.speed.max()) > best_L:
                    best_L = float(res.speed.max())
                    best_res = res
            scalars[SPEED[name, "best"].at(L).name] = best_L
            prev = best_res.weights
            best_w, best_s = [W[best_res.best()] for W in best_res.weights], best_L
        c = escape_low_rank_constant(X, G, best_s)
        scalars[THM31_C[name].name] = c
        prof = layer_profile(X, best_w, cfg.floor)
        for row in prof:
            row.update({"problem": name, "bound": escape_low_rank_bound(int(row["layer"]), c)})
        profile += prof
        L = len(best_w)
        fit_layers = [r for r in prof if r["layer"] < L or G.shape[1] > 1]  # W_L: 1 x n
        fit_layers = [r for r in fit_layers if r["layer"] > 1]  # W_1: rank <= d_in
        ls = [r["layer"] for r in fit_layers]
        scalars[TAIL_W[name].name] = loglog_slope(ls, [r["tail_W"] for r in fit_layers])
        scalars[RATIO_W[name].name] = loglog_slope(ls, [r["ratio_W"] for r in fit_layers])
        hid = [r for r in prof if r["layer"] < L]
        scalars[TAIL_Z[name].name] = loglog_slope(
            [r["layer"] for r in hid], [r["tail_Z"] for r in hid]
        )
    X, G = _problems(cfg)["teacher"]
    linear = []
    for L in cfg.linear_depths:
        res = escape_directions(
            X,
            G,
            [cfg.width] * (L - 1),
            restarts=8,
            steps=cfg.steps,
            lr=cfg.lr,
            lr_end=1e-7,
            seed=cfg.seed,
            linear=True,
        )
        linear.append(
            {
                "depth": L,
                "solver": float(res.speed.max()),
                "closed_form": linear_escape_speed(X, G, L),
            }
        )
    scalars[LINEAR_ERROR.name] = max(
        abs(r["solver"] - r["closed_form"]) / r["closed_form"] for r in linear
    )
    return Measurement(
        scalars=scalars, tables={"speeds": rows, "profile": profile, "linear": linear}
    )


_SOLVED = "escape directions of projected GD on the sphere, every restart"
SPEED = {
    (p, start): Quantity(
        f"{p}_{start}_L",
        f"{p}: the best escape speed s*(L) over the {start} restarts of depth L (paper 003, "
        "Prop 3.2)" + (", cold and warm together" if start == "best" else ""),
        function=escape_measurement,
        over=_SOLVED + f" ({start}) of the {p} problem",
        units="speed",
        shape="per depth",
    )
    for p in PROBLEMS
    for start in ("cold", "warm", "best")
}
_PROFILE = "the layers of the best deepest escape direction of the {} problem"
THM31_C = {
    p: Quantity(
        f"{p}_thm31_c",
        f"{p}: the constant c of Thm 3.1's low-rank bound at the best deepest speed (003)",
        escape_measurement,
        _PROFILE.format(p),
        "bound constant",
    )
    for p in PROBLEMS
}
TAIL_W, RATIO_W, TAIL_Z = (
    {
        p: Quantity(
            f"{p}_{what}_exponent",
            f"{p}: log-log slope of the layer profile's {what} against the layer l (reported "
            "beside Thm 3.1)",
            escape_measurement,
            _PROFILE.format(p),
            "exponent",
        )
        for p in PROBLEMS
    }
    for what in ("tail_W", "ratio_W", "tail_Z")
)
LINEAR_ERROR = Quantity(
    "linear_max_rel_error",
    "largest relative error of the deep linear solver's speed against sigma_1(G^T X) "
    "(derived in the spec from 003)",
    escape_measurement,
    "the teacher problem, linear networks of the linear depths",
    "relative",
)
ESCAPES = Measure(
    escape_measurement,
    (
        *SPEED.values(),
        *THM31_C.values(),
        *TAIL_W.values(),
        *RATIO_W.values(),
        *TAIL_Z.values(),
        LINEAR_ERROR,
    ),
)


def circle_measurement(model: None, data: None, cfg: Any) -> Measurement:
    """Solve for escape directions at every width; the width-1 grid, Eq. 6, the
    construction and the linear baseline."""
    X, G = circle_inputs()
    rows: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    scalars: dict[str, float] = {}
    best_weights: list[torch.Tensor] = []
    for i, w in enumerate(cfg.widths):
        res = escape_directions(
            X,
            G,
            [w, w],
            restarts=cfg.restarts,
            steps=cfg.steps,
            lr=cfg.lr,
            lr_end=cfg.lr_end,
            seed=cfg.seed * 1000 + i,
        )
        ratio_W1 = singular_ratio(res.weights[0], cfg.floor)  # [R]
        for r in range(cfg.restarts):
            s = float(res.speed[r])
            rows.append(
                {
                    "width": w,
                    "restart": r,
                    "speed": s,
                    "kkt": float(res.kkt[r]),
                    "success": bool(s > RANK1 + cfg.margin),
                    "ratio_W1": float(ratio_W1[r]),
                }
            )
        history += [
            {"width": w, "step": 50 * k, "best_speed": v} for k, v in enumerate(res.history)
        ]
        b = res.best()
        scalars[BEST.at(w).name] = float(res.speed[b])
        scalars[FRACTION.at(w).name] = float((res.speed > RANK1 + cfg.margin).double().mean())
        scalars[DEAD.at(w).name] = float(res.dead_starts)
        scalars[KKT_BEST.at(w).name] = float(res.kkt[b])
        best_weights = [W[b] for W in res.weights]
    s_grid, phi = circle_width1_optimum(cfg.grid_points)
    angles = torch.linspace(0, 2 * math.pi, cfg.eq6_points, dtype=torch.float64)
    curve, direct = circle_width1_speed(angles), circle_width1_loss(angles).abs()
    quarter = torch.arange(8, dtype=torch.float64) * math.pi / 4
    spectra = matrix_spectra(best_weights)
    pi8 = torch.tensor([math.pi / 8], dtype=torch.float64)
    scalars.update(
        {
            WIDTH1_GRID.name: s_grid,
            WIDTH1_GRID_PHI.name: phi,
            CONSTRUCTION.name: circle_speed(circle_rank2_weights()),
            SIGMA1_GX.name: linear_escape_speed(X, G, 2),
            EQ6_ERROR.name: float((curve - direct).abs().max()),
            EQ6_QUARTER_ERROR.name: float((circle_width1_speed(quarter) - RANK1).abs().max()),
            EQ6_PI8.name: float(circle_width1_speed(pi8)),
            RATIO_W1_BEST.name: float(singular_ratio(best_weights[0], cfg.floor)),
            RATIO_W2_BEST.name: float(singular_ratio(best_weights[1], cfg.floor)),
        }
    )
    tables = {
        "restarts": rows,
        "history": history,
        "eq6": [
            {"phi": float(p), "eq6": float(a), "abs_loss": float(d)}
            for p, a, d in zip(angles, curve, direct)
        ],
    }
    return Measurement(scalars=scalars, spectra=spectra, tables=tables)


_SOLVED = "the circle's escape directions at hidden width w, every restart"
_CLOSED = "closed forms of the circle example (no optimization)"


def _q(name: str, doc: str, over: str, units: str, shape: str = "scalar") -> Quantity:
    """A quantity `circle_measurement` writes."""
    return Quantity(name, doc, function=circle_measurement, over=over, units=units, shape=shape)


BEST = _q(
    "best_w", "the best escape speed over the restarts (003 Fig 2)", _SOLVED, "speed", "per width"
)
FRACTION = _q(
    "fraction_w",
    "the restarts' success fraction, s > sqrt(2) - 1 + margin (003 Fig 2)",
    _SOLVED,
    "fraction",
    "per width",
)
DEAD = _q("dead_w", "restarts that started dead (no active unit)", _SOLVED, "count", "per width")
KKT_BEST = _q("kkt_best_w", "the best restart's KKT residual", _SOLVED, "relative", "per width")
WIDTH1_GRID = _q(
    "width1_grid", "the width-1 optimum on a grid over the angle (003 Example 1)", _CLOSED, "speed"
)
WIDTH1_GRID_PHI = _q("width1_grid_phi", "the angle of the width-1 grid optimum", _CLOSED, "rad")
CONSTRUCTION = _q(
    "construction", "the rank-2 construction's speed (003 Sec 4: exactly 1/2)", _CLOSED, "speed"
)
SIGMA1_GX = _q("sigma1_GX", "the deep linear speed sigma_1(G^T X) at L = 2", _CLOSED, "speed")
EQ6_ERROR = _q("eq6_error", "max |Eq. 6 - |L_0|| over the angle grid (003 Eq. 6)", _CLOSED, "speed")
EQ6_QUARTER_ERROR = _q(
    "eq6_quarter_error", "max |Eq. 6 - (sqrt(2) - 1)| at multiples of pi/4", _CLOSED, "speed"
)
EQ6_PI8 = _q("eq6_pi8", "Eq. 6 at pi/8 (zero)", _CLOSED, "speed")
_TOP = "the best restart at the largest width"
RATIO_W1_BEST = _q("ratio_W1_best", "s_2/s_1(W_1) (003 Sec 4: rank 2)", _TOP, "ratio")
RATIO_W2_BEST = _q("ratio_W2_best", "s_2/s_1(W_2) (003 Sec 4: rank 1)", _TOP, "ratio")
CIRCLE = Measure(
    circle_measurement,
    (
        BEST,
        FRACTION,
        DEAD,
        KKT_BEST,
        WIDTH1_GRID,
        WIDTH1_GRID_PHI,
        CONSTRUCTION,
        SIGMA1_GX,
        EQ6_ERROR,
        EQ6_QUARTER_ERROR,
        EQ6_PI8,
        RATIO_W1_BEST,
        RATIO_W2_BEST,
    ),
)
