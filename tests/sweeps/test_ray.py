"""The ray executor on a real local Ray cluster (`ray.init(num_cpus=2)`), no mocks."""

import json
import logging

import pytest

ray = pytest.importorskip("ray")

from bottlenecklab.experiments import (  # noqa: E402
    EXPERIMENTS,
    get,
    point_requests,
    resolve_config,
    run_experiment,
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


@pytest.fixture(scope="module", autouse=True)
def cluster():
    # address="local": a private 2-CPU cluster, even if another is running on this machine
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    yield
    ray.shutdown()


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
    """Summary rows without what legitimately differs between executors (host, times)."""
    # wall-clock measurements: run time, measuring time, the adaptive-step overhead ratio
    drop = ("meta.", "info.wall_s", "metric.measure_s", "metric.adapt_overhead")
    return [{k: v for k, v in r.items() if not k.startswith(drop)} for r in rows]


GRID_EXPERIMENTS = sorted(n for n, e in EXPERIMENTS.items() if e.grid)
TIMED_CLAIMS = ("adaptive-overhead",)  # judged on wall-clock time: differs run to run


@pytest.mark.parametrize("name", GRID_EXPERIMENTS)
def test_grid_experiment_gives_identical_summaries_on_local_and_ray(tmp_path, name):
    exp = get(name)
    cfg = resolve_config(exp, "smoke")
    outs = {}
    for name, executor in [
        ("local1", LocalExecutor(1)),
        ("local2", LocalExecutor(2)),
        ("ray", RayExecutor()),
    ]:
        out = tmp_path / name
        record = run_experiment(exp, cfg, out, preset="smoke", executor=executor, progress=False)
        assert all(p.status == "done" for p in record.points) and len(record.points) >= 1
        outs[name] = out
    ref = _comparable(read_rows(outs["local1"] / "summary.parquet"))
    for name in ("local2", "ray"):
        assert _comparable(read_rows(outs[name] / "summary.parquet")) == ref, name
        assert read_rows(outs[name] / "spectra.parquet") == read_rows(
            outs["local1"] / "spectra.parquet"
        )
        claims = json.loads((outs[name] / "claims.json").read_text())
        ref_claims = json.loads((outs["local1"] / "claims.json").read_text())
        assert [c for c in claims if c["id"] not in TIMED_CLAIMS] == [
            c for c in ref_claims if c["id"] not in TIMED_CLAIMS
        ]


def test_killed_training_is_retried_and_resumes_to_the_same_result(tmp_path):
    exp = get(EXP)
    cfg = resolve_config(exp, "smoke")
    reqs = point_requests(exp, cfg)
    run_sweep(reqs, run_point, LocalExecutor(1), Settings(tmp_path / "clean"))
    report = run_sweep(reqs, DieOnce(run_point), RayExecutor(), Settings(tmp_path / "killed"))
    assert report.done == len(reqs)
    clean, killed = RunStore(tmp_path / "clean"), RunStore(tmp_path / "killed")
    for r in reqs:
        assert killed.meta(r.run_id)["attempts"] == 2  # the first attempt died
        a, b = clean.result(r.run_id), killed.result(r.run_id)
        a.scalars.pop("measure_s"), b.scalars.pop("measure_s")
        assert b.scalars == pytest.approx(a.scalars, rel=1e-9, abs=1e-12)
        assert b.info["steps"] == a.info["steps"]


def test_ensembles_run_as_ray_tasks_with_the_same_results(tmp_path):
    """`ensemble=4`: the flagship's points train as one ensemble on a Ray worker first."""
    exp = get(EXP)
    cfg = resolve_config(exp, "smoke")
    plain = run_experiment(exp, cfg, tmp_path / "plain", preset="smoke", progress=False)
    out = tmp_path / "ray"
    batched = run_experiment(
        exp, cfg, out, preset="smoke", executor=RayExecutor(), progress=False, ensemble=4
    )
    metas = [json.loads(p.read_text()) for p in (out / "points").glob("*/meta.json")]
    assert len(metas) == len(plain.points) and all(m.get("batch_members") for m in metas)
    for a, b in zip(plain.points, batched.points):
        a.scalars.pop("measure_s"), b.scalars.pop("measure_s")
        assert b.scalars == pytest.approx(a.scalars, rel=1e-6, abs=1e-9)
