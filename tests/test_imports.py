"""Imports without side effects: importing the library, the probe or `measure` (and the
probe drawing its figures) loads no experiment; the registry discovers the experiment
modules on its first read, once, and finds every one; no module imports itself back."""

from __future__ import annotations

import dataclasses
import graphlib
import json
import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import bottlenecklab
from bottlenecklab.experiments import _registry, discover

SRC = Path(bottlenecklab.__file__).parent

# One fresh interpreter (imports are per process), in stages; what each stage has loaded.
STAGES = """
import json, sys

def loaded():
    return sorted(m for m in sys.modules if "experiments" in m)

def areas():  # an area's module: bottlenecklab.experiments.<area>.<name>
    return [m for m in loaded() if m.startswith("bottlenecklab.") and m.count(".") >= 3]

out = {}
import bottlenecklab, bottlenecklab.probe, bottlenecklab.measure
out["import"] = loaded()
import torch
from torch import nn
net = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2))
X = torch.randn(40, 3, generator=torch.Generator().manual_seed(0))
probe = bottlenecklab.BottleneckProbe(net, X)
paths, page = probe.plot("figures"), probe.report("page")
out["probe_files"] = all(p.is_file() for p in paths) and page.is_file()
out["probe"] = loaded()
import bottlenecklab.experiments, bottlenecklab.report
out["packages"] = areas()
out["n"] = len(bottlenecklab.experiments.EXPERIMENTS)
out["read"] = areas()
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def stages(tmp_path_factory) -> dict:
    """What a fresh interpreter has loaded after each stage of `STAGES`."""
    cwd = tmp_path_factory.mktemp("imports")
    env = {**os.environ, "PYTHONPATH": str(SRC.parent), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, "-c", STAGES], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_library_the_probe_or_measure_loads_no_experiment(stages):
    assert stages["import"] == []


def test_the_probe_draws_its_figures_and_page_without_loading_an_experiment(stages):
    assert stages["probe_files"] and stages["probe"] == []


def test_the_experiments_package_imports_no_experiment_until_the_registry_is_read(stages):
    assert stages["packages"] == []
    # the counter-case: reading the registry does load them, one module per experiment
    assert stages["n"] >= 24 and len(stages["read"]) >= stages["n"]


def test_the_registry_discovers_once_on_its_first_read(monkeypatch):
    found = discover()
    calls: list[int] = []

    def counting():
        calls.append(1)
        return found

    monkeypatch.setattr(_registry, "discover", counting)
    reg = _registry.Registry()
    assert calls == [] and "not yet" in repr(reg)
    names = sorted(reg)
    assert calls == [1]
    assert len(reg) == len(found) and names[0] in reg and reg[names[0]] is found[0].experiment
    assert calls == [1]
    with pytest.raises(ValueError, match="registered twice"):
        reg.register(dataclasses.replace(found[0].experiment, doc="a second one"))


def test_discovery_finds_every_public_module_of_every_area():
    """Independently of `discover`: every public module file in an area folder is one
    registered experiment whose name starts with the area's prefix."""
    root = SRC / "experiments"
    files = {
        f"bottlenecklab.experiments.{p.parent.name}.{p.stem}"
        for p in root.glob("*/*.py")
        if not p.parent.name.startswith("_") and not p.stem.startswith("_")
    }
    found = discover()
    assert {f.module.__name__ for f in found} == files and len(files) >= 24
    registry = _registry.EXPERIMENTS
    assert set(registry) == {f.experiment.name for f in found}
    for f in found:
        assert f.experiment.name.startswith(f.prefix + "/")
        assert registry[f.experiment.name] is f.experiment


def test_report_names_resolve_on_first_use():
    import bottlenecklab.report as report

    for name in report.__all__:
        assert getattr(report, name) is not None, name
    with pytest.raises(AttributeError):
        report.no_such_name  # noqa: B018


def test_no_module_imports_itself_back():
    """The module import graph of `bottlenecklab` (every import statement, those inside
    functions and under `TYPE_CHECKING` included) is acyclic; import-linter's
    `acyclic_siblings` contract checks the same between sibling packages."""
    graph = grimp.build_graph("bottlenecklab", cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    try:
        graphlib.TopologicalSorter(edges).prepare()
    except graphlib.CycleError as e:
        pytest.fail(f"import cycle: {' -> '.join(e.args[1])}")
