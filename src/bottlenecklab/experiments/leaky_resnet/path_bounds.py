"""`leaky-resnet/path-bounds` — paper 000, Fig 3 (App. B) and Theorem 4.

    bottlenecklab run leaky-resnet/path-bounds --preset quick

Leaky ResNets at several `L~` (quick: fixed `rho L~`): path length sublinear (`l_gamma /
L~` falls, slope <= 1/2), `max||B||`, `max||B^T S||` bounded (slope <= 1/4), Thm 4 (1) at
every `L~` and (2) at every layer with its own `gamma_l`, `||B_l||` and
`sqrt(max(a_l, 0))`, at `gamma_l = gamma0 ||K_l||_op` and at `1/L~`; certified. The
paper's "relatively constant" path length (slope <= 0.1) is asserted on the plain length
`sum rho_l ||V_l||_F` (a registered finding); the kernel-metric lengths are reported.

Expected (quick, seed 0): `path-length-sublinear` passes, the finding
`path-length-constant` fails, the four Thm 4 sides that read `H` or `B` are not converged
on every machine (stationarity <= 1e-4 needed; the nets end near 0.1), 6 reported; ~10
min of points on one core. Numbers: `docs/lab-notes/leaky-resnet.md`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from bottlenecklab.experiments._checks import at_least, at_most, listed, outcome, reported
from bottlenecklab.experiments._spec import (
    ClaimSpec,
    Experiment,
    Measure,
    Measurement,
    Outcome,
    Points,
    Reads,
)
from bottlenecklab.experiments.leaky_resnet._common import (
    LAYERS,
    PaperConfig,
    layer_measurement,
    presets,
)
from bottlenecklab.measure import Quantity, certify, loglog_slope
from bottlenecklab.measure._balance import balancedness_residual
from bottlenecklab.measure._path_bounds import (
    B_MAX,
    BS_MAX,
    PATH_BOUNDS,
    PATH_LENGTH,
    PATH_LENGTH_CONST,
    PATH_LENGTH_PLAIN,
    THM4_ARG_NEGATIVE,
    THM4_LOWER,
    THM4_LOWER_CONST,
    THM4_LOWER_CORRECTED,
    THM4_MIDDLE,
    THM4_MIDDLE_CONST,
    THM4_PER_LAYER_FRAC,
    THM4_UPPER,
    THM4_UPPER_CONST,
    THM4_WINDOW_USED_MAX,
    THM4_WINDOW_USED_MAX_CONST,
    hamiltonian_bounds,
    hamiltonian_bounds_constant_gamma,
    layer_speed_window,
    momentum_bounds,
    ridge_layers,
    speed_window_columns,
)

LEAK = "model.leak"


@dataclass(frozen=True)
class Config(PaperConfig):
    """Fig 3 at the paper's sizes (`PaperConfig`).

    Args:
        leaks: effective depths `L~` of the sweep.
        max_exponent: "bounded as L~ grows": log-log slope against `L~` at most this.
        sublinear_exponent: `l_gamma / L~` strictly decreasing and slope at most this.
        constant_exponent: "relatively constant" plain path length: slope at most this.
        rho_leak: a fixed `rho L~` (each point's depth `round(L~ / rho_leak)`); `None`
            keeps `model.depth`.
    """

    leaks: tuple[float, ...] = (2.0, 4.0, 6.0, 8.0, 12.0, 16.0)
    max_exponent: float = 0.25
    sublinear_exponent: float = 0.5
    constant_exponent: float = 0.1
    rho_leak: float | None = None

    def __post_init__(self) -> None:
        # every override (a grid point's `model.leak` too) rebuilds the config
        if self.rho_leak is not None:
            if not self.rho_leak > 0:
                raise ValueError(f"rho_leak must be > 0, got {self.rho_leak}")
            depth = max(1, round(self.model.leak / self.rho_leak))
            object.__setattr__(self, "model", dataclasses.replace(self.model, depth=depth))


BASE = Config()  # its tolerances are the claims' windows (value stability: 1/4 of them)


def path_measurement(model, data, cfg: Config) -> Measurement:
    """Layer table, Fig 3 quantities (three path lengths), both sides of Thm 4 (at the
    layer ridges and at `gamma = 1/L~`) and the Prop 10 residual.

    Per layer (`layers.csv`), Thm 4 (2) at both ridges: `thm4_arg` (`a_l`), `thm4_used`
    (the signed fraction of the window used), and the same with the suffix `_const`.
    """
    table, scalars = layer_measurement(model, data, cfg.train.lam, cfg.gamma0)
    leak = float(model.leak)
    scalars.update(momentum_bounds(table))
    scalars.update(hamiltonian_bounds(table, leak))
    der = certify(model, data, cfg.train.lam, tau=cfg.certify.tau).derivatives  # the table's
    X, Y = data.x_train, data.y_train
    ridge = ridge_layers(model, X, Y, cfg.train.lam, 1.0 / leak, derivatives=der)
    scalars.update(
        hamiltonian_bounds_constant_gamma(model, X, Y, cfg.train.lam, 1.0 / leak, layers=ridge)
    )
    own, one = layer_speed_window(table, leak), ridge.window(leak)
    rows = speed_window_columns(table.rows, {"": own, "_const": one})
    scalars["rho_leak_max"] = float(table.column("rho").max() * leak)
    scalars["balancedness_max"] = float(abs(balancedness_residual(table, leak)).max())
    return Measurement(scalars=scalars, layers=rows, spectra=table.spectra)


RHO_LEAK_MAX = Quantity(
    "rho_leak_max",
    "max_l rho_l L~, the largest layer step in units of 1/L~ (paper 000, §3)",
    function=path_measurement,
    over="the layer steps of a trained leaky ResNet",
    units="dimensionless",
)
# The layer measurement with the Fig 3 and Thm 4 quantities (`measure.geodesics`).
PATHS = Measure(path_measurement, (*LAYERS.quantities, *PATH_BOUNDS, RHO_LEAK_MAX))


def _slope(pts: Points, quantity: Quantity) -> float:
    """Log-log slope of `quantity` against `L~` over the sweep (nan below 2 points)."""
    return loglog_slope(pts.swept(LEAK), pts.values(quantity)) if len(pts) >= 2 else math.nan


def _negative_layers(pts: Points, key: str) -> str:
    """Per `L~`, the layers whose per-layer column `key` is negative."""
    per = [",".join(str(int(r["layer"])) for r in p.layers if r[key] < 0) or "none" for p in pts]
    return "; ".join(f"L~ = {x:g}: {p}" for x, p in zip(pts.swept(LEAK), per))


def _sweep(check: Callable[[Config, Points], Outcome]) -> Callable[[Config, Points], Outcome]:
    """`check` with the sweep's facts for the statements: `{leaks}`, `{depths}` and, for
    every scalar, its values over the sweep (`{path_length}`: `"1.2, 3.4"`)."""

    def checked(cfg: Config, pts: Points) -> Outcome:
        names = set.intersection(*(set(p.scalars) for p in pts))
        return check(cfg, pts).with_facts(
            leaks=listed(pts.swept(LEAK), "g"),
            depths=", ".join(str(len(p.layers)) for p in pts),
            **{n: listed(pts.values(n)) for n in names},
        )

    return checked


def sublinear(cfg: Config, pts: Points) -> Outcome:
    """`l_gamma / L~` strictly decreasing and the slope of `l_gamma` small enough."""
    per_leak = [v / x for v, x in zip(pts.values(PATH_LENGTH), pts.swept(LEAK))]
    falling = len(per_leak) >= 2 and all(b < a for a, b in zip(per_leak, per_leak[1:]))
    slope, bound = _slope(pts, PATH_LENGTH), cfg.sublinear_exponent
    return outcome(
        f"l_gamma / L~ strictly decreasing; slope <= {bound:g}",
        f"slope {slope:.4g}; l_gamma / L~ "
        + ("strictly decreasing" if falling else "NOT strictly decreasing"),
        falling and math.isfinite(slope) and slope <= bound,
        per_leak=listed(per_leak),
    )


def smallest_gap(upper: Quantity, lower: Quantity) -> Callable[[Config, Points], Outcome]:
    """`min over the sweep of upper - lower >= 0`."""
    return lambda cfg, pts: at_least(
        min(u - l for u, l in zip(pts.values(upper), pts.values(lower))), 0.0
    )


def constant_gamma(cfg: Config, pts: Points) -> Outcome:
    """Thm 4 (1) at `gamma = 1/L~`: the smallest margin of either side over the sweep."""
    mid, up, lo = (pts.values(q) for q in (THM4_MIDDLE_CONST, THM4_UPPER_CONST, THM4_LOWER_CONST))
    return at_least(min(min(u - m, m - l) for m, u, l in zip(mid, up, lo)), 0.0)


def per_layer(cfg: Config, pts: Points) -> Outcome:
    """The largest fraction of its window a layer uses, over both ridges and the sweep."""
    own, one = pts.values(THM4_WINDOW_USED_MAX), pts.values(THM4_WINDOW_USED_MAX_CONST)
    return at_most(max(max(a, b) for a, b in zip(own, one)), 1.0)


def negative_arg(cfg: Config, pts: Points) -> Outcome:
    """How many layers have `a_l < 0` (the largest number over the sweep, reported)."""
    return reported(max(pts.values(THM4_ARG_NEGATIVE))).with_facts(
        neg=_negative_layers(pts, "thm4_arg"), neg_const=_negative_layers(pts, "thm4_arg_const")
    )


def metric_slopes(cfg: Config, pts: Points) -> Outcome:
    """The slopes of the kernel-metric path lengths (reported)."""
    const = _slope(pts, PATH_LENGTH_CONST)
    return reported(const).with_facts(const=const, own=_slope(pts, PATH_LENGTH))


_LN_RANGE = math.log(24.0 / 6.0)  # a slope window w is a relative window w ln 4 (quick)
MIDDLE = Reads((THM4_MIDDLE,), window=0.25)  # reads H and B: kinked
THM4 = "000 Thm 4"
SLOPE = "log-log slope against L~ (values {%s})"
UNTRAINED = "; the bound {cfg.max_exponent:g} holds on the untrained nets too: reported"

PATH_LENGTH_SUBLINEAR = ClaimSpec(
    "path-length-sublinear",
    "the path length l_gamma grows sublinearly in L~ ({leaks}): l_gamma / L~ "
    "({per_leak}) strictly decreasing, and log-log slope of l_gamma (values "
    "{path_length}) at most {cfg.sublinear_exponent:g}",
    Reads((PATH_LENGTH,), BASE.sublinear_exponent * _LN_RANGE, relative=True),
    _sweep(sublinear),
)
PATH_LENGTH_CONSTANT = ClaimSpec(
    "path-length-constant",
    "the path length sum_l rho_l ||V_l||_F (App B's int ||dA_p/dp|| dp, no kernel "
    "metric) stays relatively constant as L~ grows ({leaks}; depths {depths}, rho L~ "
    "up to {rho_max:.3g}): " + SLOPE % "path_length_plain",
    Reads((PATH_LENGTH_PLAIN,), BASE.constant_exponent * _LN_RANGE, relative=True),
    _sweep(
        lambda cfg, pts: at_most(
            _slope(pts, PATH_LENGTH_PLAIN),
            cfg.constant_exponent,
            rho_max=max(pts.values(RHO_LEAK_MAX)),
        )
    ),
    source="000 App B, Fig 3",
)
PATH_LENGTH_METRIC_SLOPES = ClaimSpec(
    "path-length-metric-slopes",
    "log-log slope against L~ of the path length in the (K + gamma I) metric at "
    "gamma = 1/L~ (values {path_length_const}): {const:.3g}; at gamma_l = "
    "{cfg.gamma0:g} ||K_l||_op (l_gamma, values {path_length}): {own:.3g}; the "
    "measured number is the first",
    None,
    _sweep(metric_slopes),
    source="000 Thm 4, Fig 3",
)
B_BOUNDED = ClaimSpec(  # the fixed-point start meets the bound too (vacuity audit V6)
    "B-bounded",
    "max_l ||B_l|| stays bounded as L~ grows ({leaks}): " + SLOPE % "B_max" + UNTRAINED,
    None,
    _sweep(lambda cfg, pts: reported(_slope(pts, B_MAX))),
)
BS_BOUNDED = ClaimSpec(
    "BS-bounded",
    "max_l ||B_l^T S_(l-1)|| stays bounded as L~ grows ({leaks}): " + SLOPE % "BS_max" + UNTRAINED,
    None,
    _sweep(lambda cfg, pts: reported(_slope(pts, BS_MAX))),
)
THM4_UPPER_CLAIM = ClaimSpec(  # holds untrained by 9532 (vacuity audit V7): the lower sides fail
    "thm4-upper",
    "gamma c^2 - (-(2/L~)H - min COI_gamma) at every L~: smallest over the sweep "
    "(middle terms {thm4_middle}; upper bounds {thm4_upper}); >= 0 also on untrained "
    "nets, so reported: thm4-lower(-corrected) carry Thm 4 (1)",
    None,
    _sweep(
        lambda cfg, pts: reported(
            min(u - m for u, m in zip(pts.values(THM4_UPPER), pts.values(THM4_MIDDLE)))
        )
    ),
    source=THM4,
)
THM4_LOWER_CLAIM = ClaimSpec(
    "thm4-lower",
    "(-(2/L~)H - min COI_gamma) + (l_gamma/L~ + gamma c)^2 >= 0 at every L~ (paper's "
    "form): smallest over the sweep (lower bounds {thm4_lower})",
    dataclasses.replace(MIDDLE, scalars=(THM4_MIDDLE, THM4_LOWER)),
    _sweep(smallest_gap(THM4_MIDDLE, THM4_LOWER)),
    source=THM4,
)
THM4_LOWER_CORRECTED_CLAIM = ClaimSpec(
    "thm4-lower-corrected",
    "the same with sqrt(gamma) c in place of gamma c (the form the proof supports): "
    "smallest over the sweep (lower bounds {thm4_lower_corrected})",
    dataclasses.replace(MIDDLE, scalars=(THM4_MIDDLE, THM4_LOWER_CORRECTED)),
    _sweep(smallest_gap(THM4_MIDDLE, THM4_LOWER_CORRECTED)),
    source=THM4,
)
THM4_PER_LAYER = ClaimSpec(
    "thm4-per-layer",
    "-L~ sqrt(gamma_l) ||B_l|| <= ||V_l|| - L~ sqrt(max(a_l, 0)) <= 2 L~ sqrt(gamma_l) "
    "||B_l||, a_l = COI_gamma,l + (2/L~)H, at every layer with its own gamma_l and "
    "||B_l|| (the form the proof supports), at gamma_l = {cfg.gamma0:g} ||K_l||_op and "
    "at gamma = 1/L~: the largest fraction of its window a layer uses, over layers, "
    "both ridges and the sweep (at most 1 where it holds; per L~ at gamma_l: "
    "{thm4_window_used_max}; at 1/L~: {thm4_window_used_max_const})",
    Reads((THM4_WINDOW_USED_MAX, THM4_WINDOW_USED_MAX_CONST), window=1.0),
    _sweep(per_layer),
    source=THM4,
)
THM4_PER_LAYER_PAPER_FORM = ClaimSpec(
    "thm4-per-layer-paper-form",
    "fraction of layers where (2) holds as the paper writes it (gamma c with "
    "c = max_l ||B_l||, sqrt(a_l) undefined where a_l < 0), per L~ at gamma_l = "
    "{cfg.gamma0:g} ||K_l||_op: {thm4_per_layer_frac}; smallest over the sweep",
    None,
    _sweep(lambda cfg, pts: reported(min(pts.values(THM4_PER_LAYER_FRAC)))),
    source=THM4,
)
THM4_PER_LAYER_NEGATIVE_ARG = ClaimSpec(
    "thm4-per-layer-negative-arg",
    "layers where a_l = COI_gamma,l + (2/L~)H < 0 (the proof's identity bounds it "
    "below only by -gamma_l ||B_l||^2; inside the bottleneck it tends to "
    "-gamma_l Tr[B^T K (K + gamma I)^-1 B]): at gamma_l ({neg}; smallest a_l "
    "{thm4_arg_min}) and at gamma = 1/L~ ({neg_const}; smallest a_l "
    "{thm4_arg_min_const}); largest number of such layers at gamma_l",
    None,
    _sweep(negative_arg),
    source=THM4,
)
THM4_CONSTANT_GAMMA = ClaimSpec(
    "thm4-constant-gamma",
    "Thm 4 (1) as stated, with one ridge gamma = 1/L~ for all layers (paper's "
    "suggestion) and the paper's gamma c: smallest margin of either side over the "
    "sweep (middle terms {thm4_middle_const}; upper {thm4_upper_const}; lower "
    "{thm4_lower_const})",
    dataclasses.replace(MIDDLE, scalars=(THM4_MIDDLE_CONST, THM4_UPPER_CONST, THM4_LOWER_CONST)),
    _sweep(constant_gamma),
    source=THM4,
)

EXPERIMENT = Experiment[Config](
    name="leaky-resnet/path-bounds",
    source="000 Fig 3",
    title="Path length sublinear, max||B||, max||B^T S|| bounded in L~; Theorem 4 holds",
    config=BASE,
    presets=presets(
        smoke={"rho_leak": 1 / 3, "leaks": (1.0, 2.0)},  # depths 3, 6
        # The flagship's quick recipe at L~ = 6, 12, 24, fixed rho L~ = 0.4 (depths 15, 30, 60).
        quick={"rho_leak": 0.4, "leaks": (6.0, 12.0, 24.0)},
    ),
    grid={LEAK: "leaks"},
    measure=PATHS,
    claims=[
        PATH_LENGTH_SUBLINEAR,
        PATH_LENGTH_CONSTANT,
        PATH_LENGTH_METRIC_SLOPES,
        B_BOUNDED,
        BS_BOUNDED,
        THM4_UPPER_CLAIM,
        THM4_LOWER_CLAIM,
        THM4_LOWER_CORRECTED_CLAIM,
        THM4_PER_LAYER,
        THM4_PER_LAYER_PAPER_FORM,
        THM4_PER_LAYER_NEGATIVE_ARG,
        THM4_CONSTANT_GAMMA,
    ],
    figures=("_leaky_resnet_discretization:path_bounds", "_leaky_resnet:layer_portrait"),
    doc=__doc__ or "",
)
