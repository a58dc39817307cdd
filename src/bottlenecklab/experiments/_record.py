"""What `run_point` keeps of a trained point besides its measured quantities: the
convergence certificate, the certification extension and the earlier state, as typed
records (`PointResult.certificate`, `.extension`, `.earlier`).

On disk a point is one row of the run's `summary.parquet`; these records are stored
there as flat columns (`cert_*`, `ext_*`, `prev_*`), written by `flat` and read back
by `split` only (runs written before the records were typed have the same columns, so
they load as they are: resume, `bottlenecklab report DIR`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CertificateRecord", "EarlierState", "ExtensionRecord", "flat", "split"]

NAN = math.nan


@dataclass(frozen=True)
class CertificateRecord:
    """A point's convergence certificate (`measure.Certificate`, spec `convergence.md`).

    Args:
        stationarity: nonsmooth stationarity, relative to the regularization force.
        smooth_stationarity: the same with autograd's derivative at the kinks.
        grad_norm: `||grad F||`; reg_force: `||grad(lam R)||`.
        kinks: entries on the kink set (all calls); kink_fraction: their fraction.
        iterations: iterations of the minimization over the kink derivatives.
    """

    stationarity: float
    smooth_stationarity: float = NAN
    grad_norm: float = NAN
    reg_force: float = NAN
    kinks: float = NAN
    kink_fraction: float = NAN
    iterations: float = NAN

    @classmethod
    def of(cls, cert: Any) -> CertificateRecord:
        """The record of a `measure.Certificate` (its `scalars`, typed)."""
        return cls(**cert.scalars(prefix=""))


@dataclass(frozen=True)
class ExtensionRecord:
    """The certification extension run from a point's final state (`Gate.extension`).

    Args:
        steps: its steps; wall_s: its time (s); move: `||theta_ext - theta||`;
        loss_change: the loss after minus before; stationarity: the certificate's
            stationarity at its end.
    """

    steps: float
    wall_s: float = NAN
    move: float = NAN
    loss_change: float = NAN
    stationarity: float = NAN


@dataclass(frozen=True)
class EarlierState:
    """The values of the quantities the claims read at the state value stability
    compares with: the end of the certification extension, or without one an earlier
    state of the last phase.

    Args:
        step: the training step of that state (nan when not recorded).
        values: quantity name -> value there.
    """

    step: float = NAN
    values: Mapping[str, float] = field(default_factory=dict)

    def get(self, quantity: Any, default: float | None = None) -> float | None:
        """The earlier value of `quantity` (a `Quantity` or its name), else `default`."""
        return self.values.get(getattr(quantity, "name", quantity), default)

    def __getitem__(self, quantity: Any) -> float:
        return self.values[getattr(quantity, "name", quantity)]


# record field -> stored column (the columns runs have always had)
_CERT = {f.name: "cert_" + f.name for f in dataclasses.fields(CertificateRecord)}
_EXT = {
    "steps": "ext_steps",
    "wall_s": "ext_s",
    "move": "ext_move",
    "loss_change": "ext_loss_change",
    "stationarity": "ext_stationarity",
}
_PREV = "prev_"


def flat(
    certificate: CertificateRecord | None,
    extension: ExtensionRecord | None,
    earlier: EarlierState | None,
) -> dict[str, float]:
    """The records as the stored columns of a point's summary row."""
    out: dict[str, float] = {}
    if certificate is not None:
        out.update({col: getattr(certificate, f) for f, col in _CERT.items()})
    if extension is not None:
        out.update({col: getattr(extension, f) for f, col in _EXT.items()})
    if earlier is not None:
        out[_PREV + "step"] = earlier.step
        out.update({_PREV + k: v for k, v in earlier.values.items()})
    return out


def split(
    scalars: Mapping[str, Any],
) -> tuple[dict[str, Any], CertificateRecord | None, ExtensionRecord | None, EarlierState | None]:
    """A stored summary row's scalars as `(quantities, certificate, extension, earlier)`
    (a record is None when the row has none of its columns)."""
    cert_cols, ext_cols = set(_CERT.values()), set(_EXT.values())
    rest = {
        k: v
        for k, v in scalars.items()
        if k not in cert_cols and k not in ext_cols and not k.startswith(_PREV)
    }
    cert = ext = earlier = None
    if any(c in scalars for c in cert_cols):
        cert = CertificateRecord(**{f: float(scalars.get(col, NAN)) for f, col in _CERT.items()})
    if any(c in scalars for c in ext_cols):
        ext = ExtensionRecord(**{f: float(scalars.get(col, NAN)) for f, col in _EXT.items()})
    prev = {k[len(_PREV) :]: v for k, v in scalars.items() if k.startswith(_PREV)}
    if prev:
        step = prev.pop("step", NAN)
        earlier = EarlierState(float(step), prev)
    return rest, cert, ext, earlier
