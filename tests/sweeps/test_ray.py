"""The ray executor on a real local Ray cluster (2 CPUs, the session's `ray_cluster`), no mocks."""

import json

import pytest
import torch

ray = pytest.importorskip("ray")

from bottlenecklab.experiments import (  # noqa: E402
    EXPERIMENTS,
    Job,
    get,
    point_requests,
    resolve_config,
    run_experiment,
    run_experiments,
    run_point,
)
from bottlenecklab.sweeps import (  # noqa: E402
    DONE,
    FAILED,
    LocalExecutor,
    RayExecutor,
    RunRequest,
    RunStore,
    Settings,
    read_rows,
    run_sweep,
)
from bottlenecklab.sweeps._testing import DieOnce, counting_run  # noqa: E402

EXP = "leaky-resnet/hamiltonian-vs-depth"


pytestmark = pytest.mark.usefixtures("ray_cluster")


def _requests(extra):
    return [RunRequest(f"r{i}", {"x": i, "steps": 3, **extra.get(i, {})}) for i in range(4)]


def test_poison_run_fails_others_finish_and_rerun_trains_nothing(tmp_path):
    reqs = _requests({1: {"poison": True}, 3: {"die_at": 1}})
    settings = Settings(tmp_path)
    report = run_sweep(reqs, counting_run, RayExecutor(), settings)
    store = RunStore(tmp_path)
    assert report.failed_ids == ["r1"] and report.done == 3
    assert [store.status(r.run_id) for r in reqs] == [DONE, FAILED, DONE, DONE]
    assert "poisoned run x=1" in store.error("r1")
    # r3's worker was killed after its first step: Ray retried, the run resumed at step 1.
    assert (tmp_path / "r3" / "attempts.log").read_text().split() == ["0", "1"]
    assert store.meta("r3")["attempts"] == 2
    assert store.result("r3").scalars["acc"] == 3 * (1 + 2 + 3)
    before = {r.run_id: (tmp_path / r.run_id / "attempts.log").read_text() for r in reqs}
    done = [r for r in reqs if r.run_id != "r1"]
    again = run_sweep(done, counting_run, RayExecutor(), settings)
    assert again.skipped == 3 and again.ran_ids == []
    assert all((tmp_path / r.run_id / "attempts.log").read_text() == before[r.run_id] for r in done)


def _comparable(rows):
    """Summary rows without what legitimately differs between executors (host, times) and
    without the metrics, which `_assert_same_metrics` compares with a tolerance."""
    drop = ("meta.", "info.wall_s", "metric.")
    return [{k: v for k, v in r.items() if not k.startswith(drop)} for r in rows]


def _rtol(cfg) -> float:
    """Half the digits of the training dtype: Ray workers and local processes may run
    different GEMM kernels (thread settings), so results agree to round-off, not bitwise."""
    dtype = torch.float64 if cfg.train.dtype == "float64" else torch.float32
    return torch.finfo(dtype).eps ** 0.5


def _assert_same_metrics(rows, ref, rtol):
    """The well-conditioned results of each run agree: its costs (train and test)."""
    for r, a in zip(rows, ref):
        for key in ("metric.train_cost", "metric.test_cost"):
            if key in a:
                assert r[key] == pytest.approx(a[key], rel=rtol), (r["run_id"], key)


def _assert_same_spectra(rows, ref, rtol):
    """Singular values are perfectly conditioned (Weyl): equal up to `rtol * max`."""
    assert [(r["run_id"], r["layer"], r["matrix"], r["index"]) for r in rows] == [
        (r["run_id"], r["layer"], r["matrix"], r["index"]) for r in ref
    ]
    top = max((abs(r["value"]) for r in ref), default=0.0)
    for r, a in zip(rows, ref):
        assert r["value"] == pytest.approx(a["value"], rel=rtol, abs=rtol * top)


GRID_EXPERIMENTS = sorted(n for n, e in EXPERIMENTS.items() if e.grid)


@pytest.fixture(scope="module")
def grid_runs(tmp_path_factory, ray_cluster) -> dict[tuple[str, str], tuple]:
    """`(executor, name) -> (out, record)`: every grid experiment's smoke run on
    `LocalExecutor(2)` and on `RayExecutor()`. Each executor takes all of them in one
    `run_experiments` call (the path of `reproduce`: one pool of 2 worker processes,
    spawned once), each experiment into its own folder, with its own tables and claims."""
    root = tmp_path_factory.mktemp("grid")
    runs = {}
    for label, executor in [("local2", LocalExecutor(2)), ("ray", RayExecutor())]:
        jobs = [
            Job(get(n), resolve_config(get(n), "smoke"), root / label / n, "smoke")
            for n in GRID_EXPERIMENTS
        ]
        records = run_experiments(jobs, executor=executor, progress=False)
        for name, job, record in zip(GRID_EXPERIMENTS, jobs, records):
            runs[label, name] = (job.out, record)
    return runs


@pytest.mark.parametrize("name", GRID_EXPERIMENTS)
def test_grid_experiment_gives_the_same_results_on_local_and_ray(smoke_record, grid_runs, name):
    # The reference, `LocalExecutor(1)`: the session's smoke run of the experiment.
    _, cfg, ref, ref_record = smoke_record(name)
    runs = {"local1": (ref, ref_record), **{k: grid_runs[k, name] for k in ("local2", "ray")}}
    outs = {}
    for label, (out, record) in runs.items():
        assert record.name == name and record.out == out, label
        assert all(p.status == "done" for p in record.points) and len(record.points) >= 1, label
        outs[label] = out
    ref_rows = read_rows(outs["local1"] / "summary.parquet")
    ref_spectra = read_rows(outs["local1"] / "spectra.parquet")
    for label in ("local2", "ray"):
        rows = read_rows(outs[label] / "summary.parquet")
        assert _comparable(rows) == _comparable(ref_rows), label
        _assert_same_metrics(rows, ref_rows, _rtol(cfg))
        _assert_same_spectra(read_rows(outs[label] / "spectra.parquet"), ref_spectra, _rtol(cfg))
        claims = json.loads((outs[label] / "claims.json").read_text())
        ref_claims = json.loads((outs["local1"] / "claims.json").read_text())
        assert [c["id"] for c in claims] == [c["id"] for c in ref_claims]


def test_killed_training_is_retried_and_resumes_to_the_same_result(tmp_path, smoke_record):
    # The clean runs: the points of the session's smoke run (`LocalExecutor(1)`).
    exp, cfg, ref, _ = smoke_record(EXP)
    reqs = point_requests(exp, cfg)
    report = run_sweep(reqs, DieOnce(run_point), RayExecutor(), Settings(tmp_path / "killed"))
    assert report.done == len(reqs)
    clean, killed = RunStore(ref / "points"), RunStore(tmp_path / "killed")
    for r in reqs:
        assert killed.meta(r.run_id)["attempts"] == 2  # the first attempt died
        # Local process vs Ray worker: compared on the well-conditioned costs only (the
        # smoke net is unconverged, its Hamiltonian ill-conditioned; see `_rtol`).
        a, b = clean.result(r.run_id), killed.result(r.run_id)
        for key in ("train_cost", "test_cost"):
            assert b.scalars[key] == pytest.approx(a.scalars[key], rel=_rtol(cfg)), key
        assert b.info["steps"] == a.info["steps"]


def test_ensembles_run_as_ray_tasks_with_the_same_results(tmp_path, smoke_record):
    """`ensemble=4`: the flagship's points train as one ensemble on a Ray worker first."""
    # float64, compared on the well-conditioned costs and per-step losses (batched and
    # single GEMMs round differently; see tests/experiments/test_run_point.py). The plain
    # run is the session's (shared with test_run_point.py).
    exp, cfg, plain_out, plain = smoke_record(EXP, {"train.dtype": "float64"})
    rtol = torch.finfo(torch.float64).eps ** 0.5
    out = tmp_path / "ray"
    batched = run_experiment(
        exp, cfg, out, preset="smoke", executor=RayExecutor(), progress=False, ensemble=4
    )
    metas = [json.loads(p.read_text()) for p in (out / "points").glob("*/meta.json")]
    assert len(metas) == len(plain.points) and all(m.get("batch_members") for m in metas)
    for a, b in zip(plain.points, batched.points):
        assert a.steps == b.steps and a.status == b.status
        for key in ("train_cost", "test_cost"):
            assert b.scalars[key] == pytest.approx(a.scalars[key], rel=rtol)
    loss = {
        name: [(r["step"], r["loss"]) for r in read_rows(folder / "metrics.parquet")]
        for name, folder in (("plain", plain_out), ("ray", out))
    }
    assert [s for s, _ in loss["plain"]] == [s for s, _ in loss["ray"]]
    for (_, a), (_, b) in zip(loss["plain"], loss["ray"]):
        assert b == pytest.approx(a, rel=rtol)
