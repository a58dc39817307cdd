"""The one spectra schema (`measure._spectra`): 1-based, `k = 1` the largest, written and
read in one place."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

from bottlenecklab import measure
from bottlenecklab.measure import (
    SPECTRUM_COLUMNS,
    gap_at,
    leaky_resnet_layers,
    one_based,
    spectra_by_layer,
    spectrum_rows,
    weight_spectra,
)
from bottlenecklab.measure._frequency import frequency_spectra
from bottlenecklab.measure._spectra import matrix_spectra
from bottlenecklab.models import CircularCNNConfig, FCNNConfig, LeakyResNetConfig

SRC = Path(measure.__file__).resolve().parents[1]
EPS = torch.finfo(torch.float64).eps


def _fcnn() -> torch.nn.Module:
    return FCNNConfig(depth=3, width=5).build(4, 3, seed=0, dtype=torch.float64)


def _first_rows(rows: list[dict]) -> dict[tuple, dict]:
    """The row of index 1 of every (layer, matrix)."""
    return {(r["layer"], r["matrix"]): r for r in rows if r["index"] == 1}


def test_weight_spectra_are_one_based_largest_first() -> None:
    net = _fcnn()
    rows = weight_spectra(net)
    assert all(tuple(r)[:4] == SPECTRUM_COLUMNS for r in rows)
    for l, W in enumerate(net.weights, start=1):
        s = torch.linalg.svdvals(W.detach()).tolist()
        got = [r for r in rows if r["layer"] == l]
        assert [r["index"] for r in got] == list(range(1, len(s) + 1))
        assert [r["value"] for r in got] == s


def test_top_keeps_the_largest() -> None:
    rows = weight_spectra(_fcnn(), top=2)
    assert {r["index"] for r in rows} == {1, 2}
    full = spectra_by_layer(weight_spectra(_fcnn()))
    for l, s in spectra_by_layer(rows).items():
        assert s.tolist() == full[l][:2].tolist()


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param(
            lambda: (
                leaky_resnet_layers(
                    LeakyResNetConfig(width=6, depth=4, leak=1.0).build(
                        3, 2, seed=0, dtype=torch.float64
                    ),
                    torch.randn(
                        10, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(1)
                    ),
                    torch.randn(
                        10, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2)
                    ),
                    1e-2,
                ).spectra
            ),
            id="hamiltonian",
        ),
        pytest.param(
            lambda: frequency_spectra(
                CircularCNNConfig(size=4, channels=2, depth=2).build(32, 16, seed=0)
            ),
            id="frequency",
        ),
        pytest.param(lambda: matrix_spectra([torch.eye(3), torch.ones(2, 4)]), id="matrices"),
    ],
)
def test_every_writer_is_one_based(rows) -> None:
    got = rows()
    assert got and all(tuple(r)[:4] == SPECTRUM_COLUMNS for r in got)
    assert min(r["index"] for r in got) == 1
    for first in _first_rows(got).values():
        same = [
            r["value"]
            for r in got
            if (r["layer"], r["matrix"]) == (first["layer"], first["matrix"])
        ]
        assert first["value"] == max(same)


def test_gap_at_reads_the_kth_ratio_of_every_layer() -> None:
    net = _fcnn()
    got = gap_at(weight_spectra(net), 1)
    for l, W in enumerate(net.weights):
        s = torch.linalg.svdvals(W.detach())
        assert got[l] == pytest.approx(float(s[0] / s[1]), rel=10 * EPS)
    spec = spectrum_rows(1, "W", [4.0]) + spectrum_rows(1, "V", [3.0, 1.0])
    assert gap_at(spec, 1)[0] == 4.0 / 1e-300  # no s_2 of W: the gap is infinite in effect


def test_rows_written_before_the_schema_load_one_based() -> None:
    old = [{"layer": 1, "matrix": "W", "index": i, "value": v} for i, v in enumerate([3.0, 1.0])]
    new = spectrum_rows(2, "W", [5.0, 2.0])
    got = one_based(old + new)
    assert {l: s.tolist() for l, s in spectra_by_layer(got).items()} == {
        1: [3.0, 1.0],
        2: [5.0, 2.0],
    }
    assert one_based(new) == new


def test_no_module_builds_spectra_rows_by_hand() -> None:
    """Only `measure/_spectra.py` writes a dict with the schema's keys."""
    keys = set(SPECTRUM_COLUMNS)
    writers = []
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                names = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                if keys <= names:
                    writers.append(str(path.relative_to(SRC)))
    assert writers == ["measure/_spectra.py"]
