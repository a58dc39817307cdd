"""A new quantity is declare-and-read: the two modules of `docs/add-a-quantity.md`,
written as they are (the quantity's module as `bottlenecklab.measure._weight_norm`, the
experiment into a temporary package), run through the real runner (smoke preset): the
claim reads the quantity, its value is the network's, and value stability reads it too."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import textwrap
from pathlib import Path

import pytest

from bottlenecklab.experiments import EXPERIMENTS, register, resolve_config, run_experiment
from bottlenecklab.experiments._spec import Reads

DOC = Path(__file__).parents[2] / "docs" / "add-a-quantity.md"
QUANTITY_MODULE = "bottlenecklab.measure._weight_norm"


def _blocks() -> list[str]:
    """The how-to's Python blocks (indented under its list items)."""
    found = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(found) == 2, "docs/add-a-quantity.md: the quantity's and the experiment's"
    return [textwrap.dedent(b) for b in found]


@pytest.fixture
def how_to(tmp_path, monkeypatch):
    """`(quantity module, experiment module)` of the how-to, imported and registered."""
    quantity_src, experiment_src = _blocks()
    path = tmp_path / "_weight_norm.py"
    path.write_text(quantity_src)
    spec = importlib.util.spec_from_file_location(QUANTITY_MODULE, path)
    quantity = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, QUANTITY_MODULE, quantity)
    spec.loader.exec_module(quantity)
    pkg = tmp_path / "toy_quantity"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""A toy area."""\n')
    (pkg / "weight_norm.py").write_text(experiment_src)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_quantity.weight_norm")
    register(module.EXPERIMENT)
    yield quantity, module
    EXPERIMENTS.unregister(module.EXPERIMENT.name)
    for name in ("toy_quantity.weight_norm", "toy_quantity"):
        sys.modules.pop(name, None)


def test_the_declaration_carries_what_the_quantity_is(how_to):
    quantity, module = how_to
    q = quantity.WEIGHT_NORM_SQ
    assert (q.name, q.function, q.shape, q.rule, q.kinked) == (
        "weight_norm_sq",
        quantity.weight_norm_sq,
        "scalar",
        None,
        False,
    )
    exp = module.EXPERIMENT
    assert exp.reads_of(module.NORM_BOUNDED.id) == Reads((q,), window=1e3)
    assert exp.quantities == (q,) and exp.measure.writes(q)


def test_the_claim_reads_the_new_quantity_through_the_runner(how_to, tmp_path):
    quantity, module = how_to
    q, exp = quantity.WEIGHT_NORM_SQ, module.EXPERIMENT
    cfg = resolve_config(exp, "smoke")
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    (point,) = record.points
    value = point.value(q)
    assert value > 0 and point.earlier is not None and point.earlier.get(q) is not None
    (claim,) = record.claims
    assert claim.id == module.NORM_BOUNDED.id and claim.measured == float(f"{value:.4g}")
    assert claim.certificate is not None  # gated: a smoke net is far from certified
    assert claim.state == "not-converged"
