"""The local executor: in-process and a process pool; failures, retries, re-runs."""

from bottlenecklab.sweeps import (
    DONE,
    FAILED,
    LocalExecutor,
    RunRequest,
    RunStore,
    Settings,
    run_sweep,
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
