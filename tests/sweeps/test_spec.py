"""Sweep files: parsing, one-line errors (exit 2), the shipped example."""

from pathlib import Path

import pytest

from bottlenecklab.cli import main
from bottlenecklab.experiments import sweep_requests
from bottlenecklab.sweeps import SpecError, load_spec

EXAMPLE = Path(__file__).parents[2] / "examples" / "sweep-demo.yaml"


def test_example_expands_to_eight_distinct_runs():
    spec = load_spec(EXAMPLE)
    exp, requests = sweep_requests(spec)
    assert exp.name == "leaky-resnet/hamiltonian-vs-depth"
    assert len(requests) == len({r.run_id for r in requests}) == 8
    leaks = {r.config["model"]["leak"] for r in requests}
    assert leaks == {2.0, 4.0}
    assert {r.labels["seed"] for r in requests} == {0, 1}


def test_seed_count_and_options(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(
        E + "preset: smoke\nseeds: 3\noptions: {order: random, repeats: 2, jobs: 2, ensemble: 4}\n"
    )
    spec = load_spec(f)
    assert spec.seeds == [0, 1, 2] and spec.repeats == 2 and spec.jobs == 2
    assert spec.ensemble == 4
    _, requests = sweep_requests(spec)
    assert len({r.run_id for r in requests}) == 3 * 2 * 2  # seeds x repeats x the leaks


E = "experiment: leaky-resnet/hamiltonian-vs-depth\n"
BAD = {
    "not yaml": "grid: [unclosed",
    "not a mapping": "- 1\n- 2\n",
    "unknown key": "experiment: x\ngrd: {}\n",
    "both names": "experiment: a\nbase: b.json\n",
    "bad seeds": E + "seeds: [a]\n",
    "bad option": E + "options: {jobz: 2}\n",
    "ensemble of one": E + "options: {ensemble: 1}\n",
    "empty grid values": E + "grid: {train.lam: []}\n",
    "unknown experiment": "experiment: leaky-resnet/nope\n",
    "unknown config key": E + "grid: {train.lamb: [1]}\n",
    "bad value type": E + "grid: {model.width: [x]}\n",
    "missing base": "base: nowhere/config.json\n",
}


@pytest.mark.parametrize("text", BAD.values(), ids=BAD.keys())
def test_bad_spec_is_one_line_exit_2(tmp_path, capsys, text):
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    assert main(["sweep", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_missing_file_is_exit_2(tmp_path, capsys):
    assert main(["sweep", str(tmp_path / "none.yaml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_load_spec_raises_spec_error(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text("seeds: 2\n")
    with pytest.raises(SpecError):
        load_spec(f)
