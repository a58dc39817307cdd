"""Every experiment module keeps the shape of `docs/add-an-experiment.md`: found by
discovery in the folder of its name's prefix, a short header without lab notes, the three
presets, and a declarative `EXPERIMENT`."""

from __future__ import annotations

import ast
import inspect
import re

import pytest

from bottlenecklab.experiments import PRESETS, discover

FOUND = {f.experiment.name: f for f in discover()}
MAX_HEADER_LINES = 15
DATED = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def test_discovery_finds_every_registered_experiment() -> None:
    from bottlenecklab.experiments import EXPERIMENTS

    assert set(FOUND) == set(EXPERIMENTS) and len(FOUND) >= 24


@pytest.mark.parametrize("name", sorted(FOUND))
def test_folder_is_the_name_prefix(name: str) -> None:
    assert name.split("/")[0] == FOUND[name].prefix


@pytest.mark.parametrize("name", sorted(FOUND))
def test_header_is_short_and_holds_no_dated_run(name: str) -> None:
    doc = inspect.getdoc(FOUND[name].module) or ""
    assert doc, f"{name}: the module needs a header"
    assert len(doc.splitlines()) <= MAX_HEADER_LINES, f"{name}: lab notes go to docs/lab-notes"
    assert not DATED.search(doc), f"{name}: a dated run in the header (docs/lab-notes)"
    assert "bottlenecklab run" in doc, f"{name}: the header gives the command"


@pytest.mark.parametrize("name", sorted(FOUND))
def test_presets_are_the_three(name: str) -> None:
    assert set(FOUND[name].experiment.presets) == set(PRESETS)


@pytest.mark.parametrize("name", sorted(FOUND))
def test_definitions_do_no_io_or_plotting(name: str) -> None:
    """Declarative: no file writes, plotting or printing in an experiment module."""
    tree = ast.parse(inspect.getsource(FOUND[name].module))
    calls = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not calls & {"open", "print", "savefig", "write_text", "write_bytes"}, name


@pytest.mark.parametrize("name", sorted(n for n in FOUND if FOUND[n].experiment.specs))
def test_each_declared_claim_id_is_written_once(name: str) -> None:
    """One declaration per claim: its id appears as a string at most once in its module (the
    `ClaimSpec`; none when generated from the config), never again in a `reads=` table, a
    pattern or a list of ids. Dict keys are not counted: a table or column may share a
    claim's name (`eq6`)."""
    tree = ast.parse(inspect.getsource(FOUND[name].module))
    keys = {id(k) for node in ast.walk(tree) if isinstance(node, ast.Dict) for k in node.keys}
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in keys
    ]
    for spec in FOUND[name].experiment.specs:
        assert strings.count(spec.id) <= 1, f"{name}: {spec.id!r} written more than once"
