"""Ensembles in sweeps: same-shape runs train their Adam phase together, then finish alone,
and the sweep's results equal those of the same sweep run one by one.

Batched and single GEMMs round differently (and differently on different CPUs), so the two
paths are compared on what is well conditioned: the loss at every logged step and the final
train/test costs, trained in float64, to `RTOL = sqrt(eps)` — half the float64 digits, far
above the 60 steps' accumulated round-off (measured ~1e-13 relative) and far below any real
difference. Quantities of an unconverged smoke network such as `rank_H_min ~ -1e5`
(a ratio of tiny numbers) amplify round-off and are not compared across code paths.
"""

import csv
import json

import pytest
import torch

from bottlenecklab.cli import main
from bottlenecklab.experiments import sweep_requests
from bottlenecklab.experiments._run_point import ensemble_groups
from bottlenecklab.sweeps import load_spec, read_rows

SPEC = """
experiment: leaky-resnet/hamiltonian-vs-depth
preset: smoke
set:
  train.phases:
    - {{optimizer: adam, steps: 40, lr: {lr}, schedule: cosine}}
    - {{optimizer: lbfgs, steps: 20, lr: 1.0}}
  train.log_every: 10
  train.checkpoint_every: 25
  train.dtype: float64
grid:
  train.lam: [0.01, 0.03]
  model.leak: [1.0, 2.0]
seeds: 2
"""


def _sweep(tmp_path, name, lr=0.01, extra=(), status=0):
    spec = tmp_path / f"{name}.yaml"
    spec.write_text(SPEC.format(lr=lr))
    out = tmp_path / name
    args = ["sweep", str(spec), "--out", str(out), "--jobs", "1", "--quiet", *extra]
    assert main(args) == status
    rows = {r["run_id"]: r for r in read_rows(out / "summary.parquet")}
    return out, rows


RTOL = torch.finfo(torch.float64).eps ** 0.5
WELL_CONDITIONED = ("metric.train_cost", "metric.test_cost", "info.steps", "info.outcome")


def _close(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return b == pytest.approx(a, rel=RTOL)
    return a == b


def _losses(folder):
    """`{step: loss}` of a run folder's `metrics.csv`."""
    with open(folder / "metrics.csv", newline="") as f:
        return {int(r["step"]): float(r["loss"]) for r in csv.DictReader(f)}


def _same_training(folder_a, folder_b):
    a, b = _losses(folder_a), _losses(folder_b)
    assert a.keys() == b.keys() and len(a) >= 4
    for step in a:
        assert b[step] == pytest.approx(a[step], rel=RTOL), (step, a[step], b[step])


def test_groups_are_same_shape_runs_differing_in_seed_lam_leak(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(SPEC.format(lr=0.01))
    _, requests = sweep_requests(load_spec(spec))
    groups = ensemble_groups(requests, 3)
    assert sorted(len(g) for g in groups) == [2, 3, 3]  # 8 runs of one shape, at most 3 each
    assert len({r.run_id for g in groups for r in g}) == 8


@pytest.mark.filterwarnings("ignore")
def test_ensemble_sweep_equals_the_one_by_one_sweep(tmp_path, capsys):
    out_alone, alone = _sweep(tmp_path, "alone")
    out, batched = _sweep(tmp_path, "batched", extra=["--ensemble", "4"])
    assert alone.keys() == batched.keys() and len(alone) == 8
    for rid, row in alone.items():
        assert batched[rid]["status"] == "DONE"
        for col in WELL_CONDITIONED:
            assert _close(row[col], batched[rid][col]), (rid, col, row[col], batched[rid][col])
        _same_training(out_alone / "runs" / rid, out / "runs" / rid)
        meta = json.loads((out / "runs" / rid / "meta.json").read_text())
        assert meta["batch"].startswith("batch-") and meta["batch_members"] == 4
        with open(out / "runs" / rid / "metrics.csv", newline="") as f:
            steps = [int(r["step"]) for r in csv.DictReader(f)]
        assert steps == sorted(set(steps)) and steps[:4] == [10, 20, 30, 40]  # Adam rows once
    capsys.readouterr()
    _sweep(tmp_path, "batched", extra=["--ensemble", "4"])  # a re-run trains nothing
    assert "(8 already done)" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore")
def test_failed_ensemble_leaves_its_runs_to_finish_alone(tmp_path):
    """A diverging Adam phase (lr 1e300 overflows float64) fails the ensemble; every run
    then diverges alone, as it would without the ensemble, and is recorded the same way."""
    _, alone = _sweep(tmp_path, "alone", lr=1e300, status=1)  # diverged runs are FAILED
    out, batched = _sweep(tmp_path, "batched", lr=1e300, extra=["--ensemble", "8"], status=1)
    assert "TrainingDiverged" in (out / "runs" / "batch-failures.log").read_text()
    for rid, row in alone.items():
        assert row["info.outcome"] == batched[rid]["info.outcome"] == "diverged"
        assert row["status"] == batched[rid]["status"] == "FAILED"
        assert row["error"].startswith("diverged: ")
        assert row["info.steps"] == batched[rid]["info.steps"]


@pytest.mark.filterwarnings("ignore")
def test_experiment_run_with_ensembles_matches_the_plain_run(tmp_path, smoke_record):
    """`run --ensemble`: the flagship's L~ points train as one ensemble, same points/claims."""
    from bottlenecklab.experiments import run_experiment

    # The plain run: the session's (shared with tests/sweeps/test_ray.py).
    exp, cfg, plain_out, plain = smoke_record(
        "leaky-resnet/hamiltonian-vs-depth", {"train.dtype": "float64"}
    )
    out = tmp_path / "run"
    batched = run_experiment(exp, cfg, out, preset="smoke", progress=False, ensemble=8)
    metas = [json.loads(p.read_text()) for p in (out / "points").glob("*/meta.json")]
    assert len(metas) == len(plain.points) >= 2 and all("batch" in m for m in metas)
    assert [c.id for c in batched.claims] == [c.id for c in plain.claims]
    for a, b in zip(plain.points, batched.points):
        assert a.point == b.point and a.status == b.status and a.steps == b.steps
        for key in ("train_cost", "test_cost"):
            assert _close(a.scalars[key], b.scalars[key]), (a.point, key)
        _same_training(plain_out / "points" / a.id, out / "points" / b.id)


@pytest.mark.filterwarnings("ignore")
def test_interrupted_ensemble_continues_run_by_run(tmp_path, capsys, monkeypatch):
    """Ctrl-C inside an ensemble (after its step-25 member checkpoints): exit 130, a
    one-line message; the same command again finishes every run from its checkpoint,
    with the results of the one-by-one sweep and no metrics row twice."""
    from bottlenecklab.sweeps import MetricsLog

    _, alone = _sweep(tmp_path, "alone")
    append = MetricsLog.append

    def interrupt(self, row):
        if row.get("step") == 30:
            raise KeyboardInterrupt
        append(self, row)

    monkeypatch.setattr(MetricsLog, "append", interrupt)
    spec = tmp_path / "cut.yaml"
    spec.write_text(SPEC.format(lr=0.01))
    out = tmp_path / "cut"
    capsys.readouterr()
    args = ["sweep", str(spec), "--out", str(out), "--jobs", "1", "--ensemble", "8"]
    assert main(args) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("interrupted:") and "Traceback" not in "\n".join(err)
    monkeypatch.setattr(MetricsLog, "append", append)
    assert main([*args, "--quiet"]) == 0
    rows = {r["run_id"]: r for r in read_rows(out / "summary.parquet")}
    for rid, row in alone.items():
        for col in WELL_CONDITIONED:
            assert _close(row[col], rows[rid][col]), (rid, col)
        with open(out / "runs" / rid / "metrics.csv", newline="") as f:
            steps = [int(r["step"]) for r in csv.DictReader(f)]
        assert steps == sorted(set(steps)) and steps[:2] == [10, 20] and 30 in steps
        _same_training(tmp_path / "alone" / "runs" / rid, out / "runs" / rid)


@pytest.mark.parametrize("name", ["l2/bipartite-sparsity", "l2/width-plateau"])
def test_the_earlier_state_holds_every_quantity_a_gate_reads(name, smoke_record) -> None:
    """A claim its experiment gates itself (`Ungated(reads=...)`, e.g. `pairs`, which reads
    `pairs_covered`) needs that quantity's earlier value as much as a `Reads` gate does:
    every recorded name has its `prev_` value on every trained point."""
    exp, _, _, record = smoke_record(name)
    assert exp.recorded
    if name == "l2/bipartite-sparsity":
        assert "pairs_covered" in exp.recorded
    for p in record.points:
        assert p.steps > 0 and p.earlier is not None and p.certificate is not None
        missing = [n for n in exp.recorded if p.earlier.get(n) is None]
        assert not missing, (p.point, missing)
