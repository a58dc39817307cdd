"""The local executor: in-process and a process pool; failures, retries, re-runs."""

import pytest

from bottlenecklab.sweeps import (
    DONE,
    FAILED,
    LocalExecutor,
    RunRequest,
    RunStore,
    Settings,
    longest_first,
    run_sweep,
    run_sweeps,
)
from bottlenecklab.sweeps._testing import counting_run


def _requests(n, extra):
    return [
        RunRequest(f"r{i}", {"x": i, "steps": 4, **extra.get(i, {})}, {"x": i}) for i in range(n)
    ]


def test_pool_sweep_poison_run_fails_without_blocking_others(tmp_path):
    reqs = _requests(4, {2: {"poison": True}})
    settings = Settings(tmp_path)
    report = run_sweep(reqs, counting_run, LocalExecutor(2), settings)
    store = RunStore(tmp_path)
    assert report.done == 3 and report.failed_ids == ["r2"]
    assert [store.status(r.run_id) for r in reqs] == [DONE, DONE, FAILED, DONE]
    assert "poisoned run x=2" in store.error("r2")
    assert store.result("r3").scalars["acc"] == 3 * (1 + 2 + 3 + 4)
    # A second pass trains nothing that is done; the poison run is tried again.
    again = run_sweep(reqs, counting_run, LocalExecutor(1), settings)
    assert again.skipped == 3 and again.ran_ids == ["r2"]
    assert (tmp_path / "r0" / "attempts.log").read_text() == "0\n"


def test_killed_worker_is_retried_and_resumes_from_checkpoint(tmp_path):
    reqs = _requests(2, {1: {"die_at": 2}})
    report = run_sweep(reqs, counting_run, LocalExecutor(2), Settings(tmp_path))
    store = RunStore(tmp_path)
    assert report.done == 2
    assert (tmp_path / "r1" / "attempts.log").read_text().split() == ["0", "2"]
    assert store.result("r1").scalars["acc"] == 1 + 2 + 3 + 4  # as if never killed
    steps = (tmp_path / "r1" / "metrics.csv").read_text().splitlines()[1:]
    assert [s.split(",")[0] for s in steps] == ["1", "2", "3", "4"]


def test_several_stores_share_one_pool_and_each_gets_its_runs(tmp_path):
    """`run_sweeps`: runs of two stores on one pool land in their own store, with one
    report per store; the same run id in two stores is refused."""
    a = _requests(3, {1: {"poison": True}})
    b = [RunRequest(f"s{i}", {"x": 10 + i, "steps": 4}, {"x": 10 + i}) for i in range(2)]
    sa, sb = Settings(tmp_path / "a"), Settings(tmp_path / "b")
    ra, rb = run_sweeps([(a, sa), (b, sb)], counting_run, LocalExecutor(2))
    assert (ra.total, ra.done, ra.failed_ids) == (3, 2, ["r1"])
    assert (rb.total, rb.done, rb.failed) == (2, 2, 0)
    assert RunStore(tmp_path / "b").result("s1").scalars["acc"] == 11 * (1 + 2 + 3 + 4)
    assert not (tmp_path / "a" / "s0").exists() and not (tmp_path / "b" / "r0").exists()
    with pytest.raises(ValueError, match="two stores"):
        run_sweeps([(a[:1], sa), (a[:1], sb)], counting_run, LocalExecutor(1))


def test_set_threads_limits_the_blas_already_loaded() -> None:
    """numpy's and scipy's BLAS, loaded before the run sets its threads, run on that many
    threads (scipy's Newton took another path with the default count: thread count must
    not change a result)."""
    import numpy  # noqa: F401  (its BLAS is loaded here, before the limit)
    from threadpoolctl import threadpool_info, threadpool_limits

    from bottlenecklab.sweeps._execute import set_threads

    with threadpool_limits():  # restore the process's limits afterwards
        set_threads(1)
        blas = [p for p in threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)


def test_a_killed_worker_is_recorded_with_its_signal_and_peak_memory(tmp_path):
    """A run whose worker process is killed by `SIGKILL` (as by the OOM killer) is tried
    again once, alone, and then recorded as killed, with the signal and its worker's peak
    memory; the run beside it finishes (a death costs only its own run)."""
    reqs = _requests(2, {0: {"kill_at": 2, "hold_mb": 64, "sleep": 0.6}})
    reqs[1] = RunRequest("r1", {"x": 1, "steps": 4, "sleep": 0.6}, {"x": 1})
    report = run_sweep(reqs, counting_run, LocalExecutor(2), Settings(tmp_path))
    store = RunStore(tmp_path)
    assert report.done == 1 and report.failed_ids == ["r0"]
    assert store.status("r1") == DONE and store.status("r0") == FAILED
    assert (tmp_path / "r0" / "attempts.log").read_text().split() == ["0", "1"]
    error = store.error("r0")
    assert error.startswith("killed by SIGKILL (signal 9) at a peak of ")
    assert "2 attempts" in error
    meta = store.meta("r0")
    assert meta["worker_exit"] == -9
    assert meta["peak_rss_mb"] >= 64
    assert store.meta("r1")["peak_rss_mb"] > 0


def test_runs_start_only_as_memory_allows(tmp_path):
    """With a run's memory budget above what the machine has available, a 2-job executor
    runs one run at a time (in one worker process: no second one is ever started), and
    every run still finishes."""
    reqs = _requests(3, {})
    report = run_sweep(reqs, counting_run, LocalExecutor(2, memory_mb=1e12), Settings(tmp_path))
    assert report.done == 3
    pids = {(tmp_path / r.run_id / "pids.log").read_text() for r in reqs}
    assert len(pids) == 1


@pytest.mark.parametrize(
    ("costs", "order"),
    [
        ({"r0": 1.0, "r1": 5.0, "r2": 3.0}, ["r1", "r2", "r0"]),
        ({"r0": 1.0, "r1": None, "r2": 3.0, "r3": 2.0}, ["r2", "r1", "r3", "r0"]),  # median fill
        ({"r0": None, "r1": None, "r2": None}, ["r0", "r1", "r2"]),  # nothing known: as given
        ({"r0": 2.0, "r1": 2.0, "r2": 2.0}, ["r0", "r1", "r2"]),  # ties keep their order
    ],
)
def test_longest_first_orders_by_expected_time(costs, order) -> None:
    reqs = [RunRequest(rid, {"x": i}) for i, rid in enumerate(costs)]
    assert [r.run_id for r in longest_first(reqs, lambda r: costs[r.run_id])] == order


def test_sweep_with_costs_runs_the_longest_first(tmp_path) -> None:
    """In process (one job) the runs start in the order the executor gets them: by `cost`,
    longest first; without it, in batch order."""
    reqs = _requests(4, {})
    cost = {"r0": 1.0, "r1": 9.0, "r2": None, "r3": 4.0}
    report = run_sweep(reqs, counting_run, LocalExecutor(1), Settings(tmp_path / "a"))
    assert report.ran_ids == ["r0", "r1", "r2", "r3"]
    (ra,) = run_sweeps(
        [(reqs, Settings(tmp_path / "b"))],
        counting_run,
        LocalExecutor(1),
        cost=lambda r: cost[r.run_id],
    )
    assert ra.ran_ids == ["r1", "r2", "r3", "r0"] and ra.done == 4  # r2: the median, 4
