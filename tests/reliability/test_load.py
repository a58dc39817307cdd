"""Load: many runs, with faults, each finish exactly once (`DONE`, one result, no metrics
row twice). Figures (README): 200 tiny local runs at 2 jobs; 24 Ray runs, one killed."""

from __future__ import annotations

import csv

from bottlenecklab.sweeps import DONE, LocalExecutor, RunRequest, RunStore, Settings, run_sweep
from bottlenecklab.sweeps._store import MetricsLog
from bottlenecklab.sweeps._testing import counting_run


def _requests(n: int, die: set[int] = frozenset(), steps: int = 3) -> list[RunRequest]:
    return [
        RunRequest(f"r{i:03d}", {"x": i, "steps": steps, **({"die_at": 2} if i in die else {})})
        for i in range(n)
    ]


def _assert_each_finished_once(store: RunStore, reqs: list[RunRequest], killed: set[int]):
    for i, r in enumerate(reqs):
        assert store.status(r.run_id) == DONE
        steps = r.config["steps"]
        assert store.result(r.run_id).scalars["acc"] == r.config["x"] * steps * (steps + 1) / 2
        assert store.meta(r.run_id)["attempts"] == (2 if i in killed else 1)
        with open(store.folder(r.run_id) / "metrics.csv", newline="") as f:
            assert [int(row["step"]) for row in csv.DictReader(f)] == list(range(1, steps + 1))


def test_200_local_runs_on_2_jobs_each_finish_once(tmp_path):
    reqs = _requests(200)
    report = run_sweep(reqs, counting_run, LocalExecutor(2), Settings(tmp_path))
    assert (report.done, report.failed) == (200, 0)
    _assert_each_finished_once(RunStore(tmp_path), reqs, killed=set())
    again = run_sweep(reqs, counting_run, LocalExecutor(2), Settings(tmp_path))
    assert (again.skipped, again.done) == (200, 0)  # nothing is trained twice


def test_a_ray_sweep_with_a_worker_killed_mid_way_finishes_every_run_once(tmp_path, ray_cluster):
    from bottlenecklab.sweeps import RayExecutor

    reqs = _requests(24, die={7})  # run 7's worker process dies after step 2
    report = run_sweep(reqs, counting_run, RayExecutor(), Settings(tmp_path))
    assert (report.done, report.failed) == (24, 0)
    _assert_each_finished_once(RunStore(tmp_path), reqs, killed={7})


def test_a_torn_last_metrics_line_is_dropped(tmp_path):
    path = tmp_path / "metrics.csv"
    path.write_text("step,loss\n1,0.5\n2,0.4\n3,0.")  # killed while writing row 3
    log = MetricsLog(path)
    log.append({"step": 3, "loss": 0.3})
    with open(path, newline="") as f:
        assert [(r["step"], r["loss"]) for r in csv.DictReader(f)] == [
            ("1", "0.5"),
            ("2", "0.4"),
            ("3", "0.3"),
        ]
