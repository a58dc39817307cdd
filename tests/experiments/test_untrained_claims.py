"""`tools/untrained_claims.py`: an experiment's claims judged on its untrained networks."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bottlenecklab.experiments import get, load_run, resolve_config
from bottlenecklab.experiments.fcnn import bottleneck_bounds as bb

TOOL = Path(__file__).resolve().parents[2] / "tools" / "untrained_claims.py"
spec = importlib.util.spec_from_file_location("untrained_claims", TOOL)
untrained = importlib.util.module_from_spec(spec)
spec.loader.exec_module(untrained)


def test_every_training_config_is_cut_to_zero_steps() -> None:
    """`l2/reformulation` trains three ways (`fit`, `decay`, `linear_fit`): all are cut."""
    exp = get("l2/reformulation")
    cfg = untrained.untrained_config(exp, resolve_config(exp, "smoke"))
    for name in ("fit", "decay", "linear_fit"):
        phases = getattr(cfg, name).phases
        assert phases and all(p.steps == 0 for p in phases)


def test_untrained_points_and_raw_criteria(tmp_path) -> None:
    """The run trains no step; each claim comes back twice, the experiment's own criterion
    (`raw`) and the runner's verdict, with one table row each."""
    name = bb.EXPERIMENT.name
    pairs = untrained.untrained_claims(name, "smoke", tmp_path)
    record = load_run(tmp_path / name.replace("/", "__"), {name: get(name)})
    assert record.points and all(p.steps == 0 for p in record.points)
    assert [raw.id for raw, _ in pairs] == [judged.id for _, judged in pairs]
    rows = untrained.rows(name, pairs)
    assert len(rows) == len(pairs)
    assert all(r.split(" | ")[4] in ("holds", "fails", "reported") for r in rows)


def test_an_experiment_without_training_needs_its_solver_steps(capsys) -> None:
    assert untrained.main(["leaky-resnet/coi-minima", "--preset", "smoke"]) == 2
    assert "does not train" in capsys.readouterr().err
