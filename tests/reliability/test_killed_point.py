"""A point whose worker process is killed (as by the kernel's OOM killer): `reproduce`
records it as killed, with the signal and the worker's peak memory, never as diverged;
its claims are `not-measured` with that reason, and the run still writes its summary,
claims and report."""

from __future__ import annotations

import functools
import json

from bottlenecklab import cli
from bottlenecklab.experiments.talk import tripoints
from bottlenecklab.sweeps import LocalExecutor, RunStore
from bottlenecklab.sweeps._testing import KillDuring

NAME = tripoints.EXPERIMENT.name  # smoke: a shallow and a deep point of one seed, seconds each


class _KillingExecutor(LocalExecutor):
    """Two workers; the deep point's worker kills itself while the point runs."""

    def run(self, job, requests, tick):
        run_fn, *rest = job.args
        killing = functools.partial(job.func, KillDuring(run_fn, (("arch", "deep"),)), *rest)
        yield from super().run(killing, requests, tick)


def test_a_killed_point_is_recorded_and_the_run_still_reports(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("bottlenecklab.sweeps.make_executor", lambda *a, **k: _KillingExecutor(2))
    out = tmp_path / "repro"
    code = cli.main(
        ["reproduce", "--preset", "smoke", "--only", NAME, "--out", str(out), "--jobs", "2"]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    run = out / NAME
    assert (run / "summary.md").is_file() and (out / "report.html").is_file()
    claims = {c["id"]: c for c in json.loads((run / "claims.json").read_text())}
    deep = claims[tripoints.DEEP_AFFINE_RANK_1.id]
    assert deep["state"] == "not-measured"
    assert "1 of 1 points killed: killed by SIGKILL (signal 9)" in deep["measured"]
    assert "diverged" not in deep["measured"]
    store = RunStore(run / "points")
    killed = [r for r in store.run_ids() if store.meta(r).get("worker_exit") is not None]
    assert len(killed) == 1
    meta = store.meta(killed[0])
    assert meta["worker_exit"] == -9 and meta["peak_rss_mb"] >= 64  # it held 64 MiB
    summary = (run / "summary.md").read_text()
    assert "| killed |" in summary and "| done |" in summary
    lines = [line for line in err.splitlines() if line.startswith("[")]  # one per point
    assert sorted(line.split()[1] for line in lines) == ["DONE", "KILLED"]
    assert all(line.startswith(("[1/2] ", "[2/2] ")) and "left" in line for line in lines)
