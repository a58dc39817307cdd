"""`linear/representation-cost` — paper 001, §3, Props 12 and 14, Example 20; paper 002.

    bottlenecklab run linear/representation-cost --preset quick

Closed forms (computed once, at the grid's first depth): the deep linear cost
`R(A; L) = L sum s_i^{2/L}` against its expansion (remainder ~ `L^-2`), the optimal
factorization and its geodesic Grams, Prop 12's identity construction, Example 20's
net and its excess `~ 12 L^{1 - 2 gamma}`. Trained (the grid): bias-free deep linear nets
whose `||theta||^2` must equal the cost of the matrix they learned, with geodesic hidden
Grams and balanced layers. Quick preset: 9/9 pass in about 10 s. Measurements and the
schedule's reasons: `docs/lab-notes/fcnn.md`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from bottlenecklab.experiments._claims import at_most, in_range, unmeasured
from bottlenecklab.experiments._spec import (
    Claim,
    Experiment,
    Gate,
    Measurement,
    PointResult,
    Reads,
)
from bottlenecklab.measure import (
    fcnn_balance_residuals,
    linear_cost_gap,
    linear_geodesic_errors,
    loglog_slope,
)
from bottlenecklab.models import FCNNConfig
from bottlenecklab.tasks import LinearTeacherConfig
from bottlenecklab.theory import (
    identity_construction,
    linear_cost_expansion,
    linear_cost_remainder_constant,
    linear_geodesic_grams,
    linear_representation_cost,
    non_lipschitz_excess,
    non_lipschitz_norm_sq,
    non_lipschitz_target,
    non_lipschitz_weights,
    optimal_linear_weights,
    relu_network,
)
from bottlenecklab.training import PhaseConfig, TrainConfig

SOURCE = "001 §3"


@dataclass(frozen=True)
class Config:
    """Closed-form checks and trained deep linear networks.

    Args:
        depths: depths `L` of the trained networks (the grid).
        singular_values, shape: the closed-form test matrix `A` (`shape = (d_out, d_in)`).
        cost_depths: depths of the remainder study; slope_window: accepted log-log slope;
        constant_tol: relative tolerance of `L^2 remainder` at the largest depth against
            `(4/3) sum (log s)^3`.
        factorization_depth, factorization_width, factorization_tol: the optimal
            factorization check (relative errors of `A`, norm, Grams).
        prop12_k, prop12_d, prop12_depth, prop12_width, prop12_tol: Prop 12.
        gamma, example20_depths, example20_f_tol, example20_slope_tol: Example 20.
        n_check: sample points of the construction checks.
        norm_tol, gram_tol, balance_tol: trained tolerances (relative).
        certify: the convergence certificate of the trained claims (spec
            `convergence.md`): threshold 1e-2, the spec's default (no ReLU, no kinks: the
            stationarity is the relative gradient norm of a smooth loss); earlier state at
            the start of the last phase (a 100-step L-BFGS extension, which may stop early).
    """

    task: LinearTeacherConfig = LinearTeacherConfig()
    model: FCNNConfig = FCNNConfig(
        depth=2, width=8, activation="identity", bias_scale=0.0, init_scale=0.5
    )
    train: TrainConfig = TrainConfig(
        lam=1e-3,
        dtype="float64",
        # the last L-BFGS phase is the certificate's extension: the earlier state of
        # value stability is its start (`certify.earlier = 0`)
        phases=(
            PhaseConfig("adam", 3000, 1e-2, "cosine"),
            PhaseConfig("lbfgs", 500, 1.0),
            PhaseConfig("lbfgs", 100, 1.0),
        ),
        log_every=100,
    )
    seed: int = 0
    depths: tuple[int, ...] = (2, 4, 8)
    singular_values: tuple[float, ...] = (3.0, 1.5, 0.4, 0.0)
    shape: tuple[int, int] = (5, 4)
    cost_depths: tuple[int, ...] = (4, 8, 16, 32, 64, 128, 256)
    slope_window: tuple[float, float] = (-2.2, -1.8)
    constant_tol: float = 0.05
    factorization_depth: int = 6
    factorization_width: int = 7
    factorization_tol: float = 1e-10
    prop12_k: int = 2
    prop12_d: int = 5
    prop12_depth: int = 8
    prop12_width: int = 6
    prop12_tol: float = 1e-12
    gamma: float = 0.75
    example20_depths: tuple[int, ...] = (10, 20, 40, 100, 200, 400, 1000, 2000, 4000, 10_000)
    example20_f_tol: float = 1e-9
    example20_slope_tol: float = 0.05
    n_check: int = 200
    norm_tol: float = 0.02
    gram_tol: float = 0.05
    balance_tol: float = 0.05
    certify: Gate = Gate(earlier=0.0)


def test_matrix(cfg: Config) -> np.ndarray:
    """`A = U diag(s) V^T` of shape `cfg.shape` (Haar `U`, `V`, seed 0)."""
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((cfg.shape[0], cfg.shape[0])))
    V, _ = np.linalg.qr(rng.standard_normal((cfg.shape[1], cfg.shape[1])))
    S = np.zeros(cfg.shape)
    idx = np.arange(len(cfg.singular_values))
    S[idx, idx] = cfg.singular_values
    return U @ S @ V.T


def _closed_forms(cfg: Config) -> tuple[dict[str, float], dict[str, list[dict]]]:
    A = test_matrix(cfg)
    r0, r1, r2 = linear_cost_expansion(A)
    const = linear_cost_remainder_constant(A)
    rows = []
    for L in cfg.cost_depths:
        cost = linear_representation_cost(A, L)
        rows.append({"depth": L, "cost": cost, "remainder": cost - (L * r0 + r1 + r2 / L)})
    top = rows[-1]
    # optimal factorization
    L, rng = cfg.factorization_depth, np.random.default_rng(1)
    X = rng.standard_normal((16, cfg.shape[1]))
    Ws = optimal_linear_weights(A, L, cfg.factorization_width, seed=2)
    prod, a, gram_err = Ws[0], X, 0.0
    for W, G in zip(Ws[:-1], linear_geodesic_grams(A, X, L)):
        a = a @ W.T
        gram_err = max(gram_err, np.linalg.norm(a @ a.T - G) / np.linalg.norm(G))
    for W in Ws[1:]:
        prod = W @ prod
    norm = sum(float(np.sum(W**2)) for W in Ws)
    # Prop 12
    c = identity_construction(
        cfg.prop12_k, cfg.prop12_d, cfg.prop12_depth, cfg.prop12_width, seed=3
    )
    Xo = c.sample(cfg.n_check, seed=4)
    # Example 20
    Xc = np.random.default_rng(5).uniform(0, 1, (cfg.n_check, 3))
    ex_rows = []
    for Lx in cfg.example20_depths:
        Wx = non_lipschitz_weights(Lx, cfg.gamma)
        norm_sum = float(sum(np.sum(W**2) for W in Wx))
        ex_rows.append(
            {
                "depth": Lx,
                "excess": non_lipschitz_excess(Lx, cfg.gamma),
                "norm_sum": norm_sum,
                "norm_closed": non_lipschitz_norm_sq(Lx, cfg.gamma),
                "f_error": float(np.abs(relu_network(Wx, Xc) - non_lipschitz_target(Xc)).max()),
            }
        )
    scalars = {
        "R0": r0,
        "R1": r1,
        "R2": r2,
        "remainder_constant": const,
        "remainder_slope": loglog_slope(
            [r["depth"] for r in rows], [abs(r["remainder"]) for r in rows]
        ),
        "remainder_constant_ratio": top["depth"] ** 2 * top["remainder"] / const,
        "factorization_A_error": float(np.linalg.norm(prod - A) / np.linalg.norm(A)),
        "factorization_norm_error": abs(norm / linear_representation_cost(A, L) - 1.0),
        "factorization_gram_error": float(gram_err),
        "prop12_norm_error": abs(c.norm_sq() - cfg.prop12_depth * cfg.prop12_k),
        "prop12_identity_error": float(np.abs(relu_network(c.weights, Xo) - Xo).max()),
        "example20_f_error": max(r["f_error"] for r in ex_rows),
        "example20_norm_error": max(abs(r["norm_sum"] / r["norm_closed"] - 1.0) for r in ex_rows),
        "example20_slope": loglog_slope(
            [r["depth"] for r in ex_rows], [r["excess"] for r in ex_rows]
        ),
    }
    return scalars, {"remainder": rows, "example20": ex_rows}


def measure(model: torch.nn.Module, data, cfg: Config) -> Measurement:
    """The trained network's cost gap, geodesic errors, balance; and, at the grid's first
    depth only, the closed-form checks (pure theory: the same at every depth)."""
    scalars, tables = _closed_forms(cfg) if model.depth == cfg.depths[0] else ({}, {})
    gram = linear_geodesic_errors(model, data.x_train)
    balance = fcnn_balance_residuals(model)["summed"]
    scalars.update(
        {
            "depth": float(model.depth),
            "norm_gap": abs(linear_cost_gap(model)),
            "gram_error_max": float(gram.max()) if gram.size else 0.0,
            "balance_max": float(balance.max()) if balance.size else 0.0,
        }
    )
    layers = [{"layer": float(l), "gram_error": float(e)} for l, e in enumerate(gram, start=1)]
    return Measurement(scalars=scalars, layers=layers, tables=tables)


CLAIMS = (
    ("remainder-slope", "remainder ~ L^-2"),
    ("remainder-constant", "L^2 remainder -> (4/3) sum (log s)^3"),
    ("optimal-factorization", "the optimal factorization is exact"),
    ("trained-norm", "trained ||theta||^2 = R(A_theta; L)"),
    ("trained-grams", "trained hidden Grams are the geodesic ones"),
    ("trained-balanced", "trained net is balanced"),
    ("prop12", "Prop 12 identity construction"),
    ("example20", "Example 20 construction"),
    ("example20-excess", "Example 20 excess slope"),
)


def claims(cfg: Config, results: list[PointResult]) -> list[Claim]:
    """The claims of the spec's table (`depth-and-rank.md`), one trained network per depth."""
    done = sorted((r for r in results if r.status == "done"), key=lambda r: r.point["model.depth"])
    if len(done) < len(results) or not done:
        why = f"{len(results) - len(done)} of {len(results)} trainings diverged"
        return [unmeasured(cid, SOURCE, st, "see spec", why) for cid, st in CLAIMS]
    # the closed forms were computed once, at the grid's first depth (`measure`)
    s = next((r.scalars for r in done if "remainder_slope" in r.scalars), None)
    if s is None:
        why = "no point holds the closed-form checks (the grid's first depth failed)"
        return [unmeasured(cid, SOURCE, st, "see spec", why) for cid, st in CLAIMS]
    ratio = s["remainder_constant_ratio"]
    fact = max(
        s["factorization_A_error"], s["factorization_norm_error"], s["factorization_gram_error"]
    )
    worst = {
        k: max(r.scalars[k] for r in done) for k in ("norm_gap", "gram_error_max", "balance_max")
    }
    depths = ", ".join(f"{r.point['model.depth']}" for r in done)
    slope_target = 1 - 2 * cfg.gamma
    return [
        in_range(
            "remainder-slope",
            "001 §1.1, §3",
            f"log-log slope of |R(A;L) - (L R0 + R1 + R2/L)| over L = {cfg.cost_depths[0]}"
            f"..{cfg.cost_depths[-1]}",
            s["remainder_slope"],
            *cfg.slope_window,
        ),
        in_range(
            "remainder-constant",
            "001 §3",
            f"L^2 remainder at L = {cfg.cost_depths[-1]} over (4/3) sum (log s_i)^3 "
            f"(= {s['remainder_constant']:.4f})",
            ratio,
            1 - cfg.constant_tol,
            1 + cfg.constant_tol,
        ),
        at_most(
            "optimal-factorization",
            "001 Prop 14; 002 'Representation geodesics'",
            f"W_l = U_l S^(1/L) U_(l-1)^T at L = {cfg.factorization_depth}: largest relative "
            "error of the product vs A, of the norm vs L sum s^(2/L), of the hidden Grams vs "
            "X (A^T A)^(l/L) X^T",
            fact,
            cfg.factorization_tol,
        ),
        at_most(
            "trained-norm",
            "001 §3",
            f"trained linear nets (L = {depths}): largest |1 - ||theta||^2 / "
            "L sum s_i(A_theta)^(2/L)|",
            worst["norm_gap"],
            cfg.norm_tol,
        ),
        at_most(
            "trained-grams",
            "002 'Representation geodesics'",
            "largest relative Frobenius error of a hidden Gram vs X (A_theta^T A_theta)^(l/L) X^T",
            worst["gram_error_max"],
            cfg.gram_tol,
        ),
        at_most(
            "trained-balanced",
            "001 §2",
            "largest summed balancedness residual |||W_(l+1)||^2 - ||W_l||^2 - ||b_l||^2| / "
            "||W_(l+1)||^2",
            worst["balance_max"],
            cfg.balance_tol,
        ),
        at_most(
            "prop12",
            "001 Prop 12",
            f"identity on a {cfg.prop12_k}-planar completely positive set at L = "
            f"{cfg.prop12_depth}: max(| ||theta||^2 - L k |, max |f(x) - x|)",
            max(s["prop12_norm_error"], s["prop12_identity_error"]),
            cfg.prop12_tol,
        ),
        at_most(
            "example20",
            "001 Example 20",
            "largest |f_theta(x) - f(x)| on [0,1]^3 and relative error of the closed-form "
            "norm, over the depths",
            max(s["example20_f_error"], s["example20_norm_error"]),
            cfg.example20_f_tol,
        ),
        in_range(
            "example20-excess",
            "001 Example 20",
            f"log-log slope of ||theta||^2 - 3L over L = {cfg.example20_depths[0]}.."
            f"{cfg.example20_depths[-1]} (1 - 2 gamma = {slope_target:g})",
            s["example20_slope"],
            slope_target - cfg.example20_slope_tol,
            slope_target + cfg.example20_slope_tol,
        ),
    ]


# Presets: only what changes, with the reason.
PRESETS = {
    # Seconds: two depths, short training, few construction depths.
    "smoke": {
        "depths": (2, 3),
        "cost_depths": (4, 16, 64),
        "example20_depths": (10, 100, 1000),
        "n_check": 20,
        "train.phases": (
            {"optimizer": "adam", "steps": 50, "lr": 1e-2, "schedule": "cosine"},
            {"optimizer": "lbfgs", "steps": 10, "lr": 1.0},
        ),
    },
    # The spec's quick preset: X 64x6, teacher 5x6 with s = (3, 1.5, 0.4), width 8,
    # L in {2, 4, 8}: the base config.
    "quick": {},
    # The same at more depths (the closed forms are already at paper scale).
    "paper": {"depths": (2, 3, 4, 6, 8, 12, 16)},
}

EXPERIMENT = Experiment(
    name="linear/representation-cost",
    source=SOURCE,
    title="deep linear representation cost: closed form, expansion, constructions, trained nets",
    config=Config(),
    presets=PRESETS,
    grid={"model.depth": "depths"},
    measure=measure,
    claims=claims,
    figures=("representation_cost",),
    doc=__doc__ or "",
    # The trained claims read their worst value over depths; window = the claim's bound.
    reads={
        "trained-norm": Reads(("norm_gap",), window=0.02),  # [0, 2 %]
        "trained-grams": Reads(("gram_error_max",), window=0.05),  # [0, 5 %]
        "trained-balanced": Reads(("balance_max",), window=0.05),  # [0, 5 %]
    },
    ungated={
        "remainder-*": "closed form of R(A; L), no network",
        "optimal-factorization": "an exact construction, checked to 1e-10",
        "prop12": "an exact construction, checked to 1e-12",
        "example20*": "an exact construction and its closed-form norm",
    },
)
