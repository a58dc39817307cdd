"""A point's certificate, extension and earlier state as typed records (`_record`), and
the stored flat columns they are written to and read back from (runs written before)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from bottlenecklab.experiments import PointResult, point_result
from bottlenecklab.experiments._checks import reported
from bottlenecklab.experiments._record import (
    CertificateRecord,
    EarlierState,
    ExtensionRecord,
    flat,
    split,
)
from bottlenecklab.experiments._spec import ClaimSpec, Experiment, Measure, Measurement, Reads
from bottlenecklab.measure import TEST_ERROR, Quantity
from bottlenecklab.measure._hamiltonian import RANK_H_MEDIAN

CERT = CertificateRecord(0.5, 0.6, 1.0, 2.0, 3.0, 0.1, 7.0)
EXT = ExtensionRecord(100.0, 1.5, 0.01, -1e-4, 0.4)
EARLIER = EarlierState(460.0, {"rank_H_median": 4.5, "test_error": 0.3})


def test_records_survive_the_stored_columns() -> None:
    scalars = {"rank_H_median": 4.6, **flat(CERT, EXT, EARLIER)}
    rest, cert, ext, earlier = split(scalars)
    assert rest == {"rank_H_median": 4.6}
    assert (cert, ext, earlier) == (CERT, EXT, EARLIER)


def test_the_stored_columns_are_those_runs_always_had() -> None:
    cols = set(flat(CERT, EXT, EARLIER))
    assert {"cert_stationarity", "ext_steps", "ext_s", "ext_stationarity", "prev_step"} <= cols
    assert {"prev_rank_H_median", "prev_test_error"} <= cols


def test_a_run_written_before_loads_typed() -> None:
    """A summary row of a run written before the records were typed (flat columns)."""
    row = {
        "run_id": "abc",
        "status": "OK",
        "info.outcome": "done",
        "metric.rank_H_median": 4.6,
        "metric.cert_stationarity": 0.2,
        "metric.ext_steps": 100.0,
        "metric.prev_step": 560.0,
        "metric.prev_rank_H_median": 4.4,
    }
    p = point_result(row, {"model.leak": 2.0}, [], [])
    assert p.scalars == {"rank_H_median": 4.6}
    assert p.certificate.stationarity == 0.2 and math.isnan(p.certificate.grad_norm)
    assert p.extension.steps == 100.0
    assert p.earlier.step == 560.0 and p.earlier[RANK_H_MEDIAN] == 4.4
    assert p.change(RANK_H_MEDIAN) == pytest.approx(0.2)


def test_a_point_without_records_has_none() -> None:
    p = PointResult("p", {}, "done", "", {"x": 1.0}, [], [], 0, 0.0)
    assert (p.certificate, p.extension, p.earlier) == (None, None, None)
    assert math.isnan(p.change("x"))
    again = dataclasses.replace(p, scalars={"x": 2.0, "prev_x": 1.5})
    assert again.earlier.values == {"x": 1.5} and again.change("x") == 0.5


def _measure(model, data, cfg) -> Measurement:
    return Measurement(scalars={"rank_H_median": 1.0})


def _exp(reads: tuple) -> Experiment:
    claim = ClaimSpec("c", "a claim", Reads(reads, window=1.0), lambda c, p: reported(1.0))
    return Experiment(
        name="t/x",
        source="-",
        title="-",
        config=None,
        presets={},
        grid={},
        measure=Measure(_measure, (RANK_H_MEDIAN,)),
        claims=[claim],
    )


def test_a_claim_reads_only_what_the_measurement_declares() -> None:
    assert _exp((RANK_H_MEDIAN,)).quantities == (RANK_H_MEDIAN,)
    with pytest.raises(ValueError, match="reads \\['test_error'\\], not measured"):
        _exp((TEST_ERROR,))


def test_a_measurement_that_misses_a_declared_quantity_is_refused() -> None:
    m = Measure(lambda *a: Measurement(scalars={}), (RANK_H_MEDIAN,))
    with pytest.raises(ValueError, match="rank_H_median"):
        m(None, None, None)


def test_reading_a_kinked_quantity_gets_the_tight_gate() -> None:
    assert RANK_H_MEDIAN.kinked and Reads((RANK_H_MEDIAN,), window=1.0).kinked
    assert not Reads((TEST_ERROR,), window=1.0).kinked
    assert Reads(("rank_H_median",), window=1.0, kinked=True).kinked  # by name: stated


def test_a_quantity_needs_a_name_and_a_doc() -> None:
    with pytest.raises(ValueError):
        Quantity("not a name", "doc", function=len, over="-", units="-")
    with pytest.raises(ValueError):
        Quantity("x", " ", function=len, over="-", units="-")
