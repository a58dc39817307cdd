"""Smoke run of every registered experiment through the Python API, resume, config rules."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

import bottlenecklab
from bottlenecklab.config import ConfigError, to_dict
from bottlenecklab.experiments import (
    EXPERIMENTS,
    PRESETS,
    STATES,
    UnknownExperiment,
    get,
    resolve_config,
    resolve_device,
    run_experiment,
)
from bottlenecklab.sweeps import FAILED, RunStore

FLAGSHIP = "leaky-resnet/hamiltonian-vs-depth"
CLAIM_FIELDS = {
    "id",
    "source",
    "statement",
    "expected",
    "measured",
    "passed",
    "asserted",
    "state",
    "certificate",
    "finding",
    "margin",
    "margin_scale",
}


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under `folder` with its modification time and content."""
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(params=sorted(EXPERIMENTS))
def smoke_run(request, smoke_record):
    """`(experiment, config, out, record)` of a smoke run with its summary rendered."""
    return smoke_record(request.param)


def test_smoke_run_writes_the_run_files(smoke_run):
    exp, _, out, record = smoke_run
    for name in ("config.json", "claims.json", "summary.md"):
        assert (out / name).is_file(), name
    if exp.trains:
        with open(out / "metrics.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        assert rows and {"step", "loss"} <= set(rows[0])
    if exp.figures:
        pngs = sorted((out / "figures").glob("*.png"))
        assert pngs and all(p.stat().st_size > 0 for p in pngs)
    summary = (out / "summary.md").read_text()
    assert exp.name in summary and "Claims" in summary
    assert record.points and len(record.claims) >= 1


def test_config_json_holds_seed_version_and_resolved_config(smoke_run):
    exp, cfg, out, _ = smoke_run
    meta = json.loads((out / "config.json").read_text())
    assert meta["experiment"] == exp.name
    assert meta["preset"] == "smoke"
    assert meta["seed"] == cfg.seed
    assert meta["version"] == bottlenecklab.__version__
    assert meta["config"] == json.loads(json.dumps(to_dict(cfg)))


def test_claims_json_entries(smoke_run):
    _, _, out, record = smoke_run
    claims = json.loads((out / "claims.json").read_text())
    assert claims and len(claims) == len(record.claims)
    for c in claims:
        assert set(c) == CLAIM_FIELDS
        assert isinstance(c["passed"], bool) and isinstance(c["asserted"], bool)
        assert c["state"] in STATES
        if c["asserted"]:  # a reported number keeps `passed` = measured (finite)
            assert c["passed"] == (c["state"] == "passed")
        assert c["source"].startswith("00")
        assert isinstance(c["expected"], str | int | float)
    assert len({c["id"] for c in claims}) == len(claims)


def test_rerun_with_resume_trains_nothing(smoke_run):
    """Finished points are reused: no file of a point changes (checkpoints included)."""
    exp, cfg, out, record = smoke_run
    before = _snapshot(out / "points")
    again = run_experiment(exp, cfg, out, preset="smoke", resume=True, progress=False)
    assert _snapshot(out / "points") == before
    assert [c.passed for c in again.claims] == [c.passed for c in record.claims]
    assert [c.measured for c in again.claims] == [c.measured for c in record.claims]


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_every_experiment_has_the_three_presets_and_a_doc(name):
    exp = get(name)
    assert set(PRESETS) <= set(exp.presets) | {"paper"}  # `paper` may be the base config
    assert exp.name == name and exp.source and exp.title and exp.doc


@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_resolves(name, preset):
    exp = get(name)
    cfg = resolve_config(exp, preset)
    assert type(cfg) is type(exp.config)


def test_diverged_training_is_reported_not_raised(tmp_path):
    """An absurd learning rate: the run completes, every claim fails as unmeasured."""
    exp = get(FLAGSHIP)
    cfg = resolve_config(
        exp, "smoke", {"train.phases.0.lr": "1e30", "leaks": "1.0", "train.dtype": "float32"}
    )
    record = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False)
    assert [p.status for p in record.points] == ["diverged"]
    assert "loss became" in record.points[0].message
    assert record.claims and not any(c.passed for c in record.claims)
    # the store records it FAILED with the reason, keeps the last good checkpoint, and a
    # second call does not train it again (the divergence is deterministic)
    store = RunStore(tmp_path / "run" / "points")
    (rid,) = store.run_ids()
    assert store.status(rid) == FAILED and store.error(rid).startswith("diverged: loss became")
    assert store.checkpoint(rid).is_file() and store.finished(rid)
    assert store.meta(rid)["attempts"] == 1
    again = run_experiment(exp, cfg, tmp_path / "run", preset="smoke", progress=False, resume=True)
    assert [p.status for p in again.points] == ["diverged"]
    assert store.meta(rid)["attempts"] == 1


def test_overriding_a_swept_key_is_refused():
    exp = get(FLAGSHIP)
    with pytest.raises(ConfigError, match="swept"):
        resolve_config(exp, "smoke", {"model.leak": "3"})


def test_unknown_preset_is_refused():
    with pytest.raises(ConfigError, match="preset"):
        resolve_config(get(FLAGSHIP), "nope")


def test_seed_override():
    assert resolve_config(get(FLAGSHIP), "smoke", seed=7).seed == 7


def test_unknown_experiment_suggests_close_names():
    with pytest.raises(UnknownExperiment) as info:
        get("leaky-resnet/hamiltonian-vs-dept")
    assert FLAGSHIP in str(info.value)


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_resolve_device(device):
    assert resolve_device(device) in ("cpu", "cuda")


def test_resolve_device_refuses_unknown():
    with pytest.raises(ConfigError):
        resolve_device("tpu")


def test_experiments_sharing_one_executor_give_their_own_results(tmp_path, smoke_record):
    """`run_experiments` queues two experiments' points on one pool: each run folder holds
    the claims a run of its own gives, its own point time, and the shared wall time
    counts once (`total_wall_s`)."""
    from bottlenecklab.experiments import Job, run_experiments, total_wall_s
    from bottlenecklab.sweeps import LocalExecutor

    names = [FLAGSHIP, "leaky-resnet/coi-minima"]
    jobs = [Job(get(n), resolve_config(get(n), "smoke"), tmp_path / n, "smoke") for n in names]
    records = run_experiments(jobs, executor=LocalExecutor(2), progress=False)
    for name, record in zip(names, records):
        alone = smoke_record(name)[3]
        assert [(c.id, c.state, c.measured) for c in record.claims] == [
            (c.id, c.state, c.measured) for c in alone.claims
        ]
        meta = json.loads((tmp_path / name / "config.json").read_text())
        assert meta["shared"] == 2 and meta["points_s"] <= meta["wall_s"] * 2 + 1
    metas = [r.meta for r in records]
    assert metas[0]["call"] == metas[1]["call"]
    assert total_wall_s(metas) == max(m["wall_s"] for m in metas)


def test_a_smoothed_phase_on_a_net_without_relu_calls_is_refused_before_running(tmp_path):
    """`PhaseConfig.smooth` on deep linear nets (no ReLU call to smooth): one-line
    `ConfigError` before any file is written, not failed points."""
    exp = get("linear/representation-cost")
    cfg = resolve_config(exp, "smoke", {"train.phases.0.smooth": 10.0})
    out = tmp_path / "run"
    with pytest.raises(ConfigError, match="no relu/leaky_relu call"):
        run_experiment(exp, cfg, out, preset="smoke")
    assert not (out / "config.json").exists() and not (out / "points").exists()
