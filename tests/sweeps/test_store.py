"""The run store, the append-only metrics log and one guarded attempt (`execute_run`)."""

import json

from bottlenecklab.sweeps import (
    DONE,
    FAILED,
    MetricsLog,
    RunRequest,
    RunResult,
    RunStore,
    Settings,
    collect,
    execute_run,
    read_rows,
)


def _ok(request, ctx):
    ctx.metrics.append({"step": 1, "v": request.config["x"]})
    return RunResult({"y": 2.0 * request.config["x"]}, {"spectra": [{"index": 0, "value": 1.5}]})


def _boom(request, ctx):
    raise RuntimeError("poisoned config")


def test_metrics_log_is_append_only_and_skips_old_steps(tmp_path):
    log = MetricsLog(tmp_path / "m.csv")
    for s in (1, 2, 3):
        log.append({"step": s, "loss": 1.0 / s})
    again = MetricsLog(tmp_path / "m.csv")  # a resumed attempt re-logs steps 2, 3, then 4
    for s in (2, 3, 4):
        again.append({"step": s, "loss": 9.0})
    lines = (tmp_path / "m.csv").read_text().splitlines()
    assert lines[0] == "step,loss" and len(lines) == 5 and lines[-1] == "4,9.0"


def test_done_run_has_config_meta_result_and_is_not_rerun(tmp_path):
    settings = Settings(tmp_path, device="cpu", git_commit="abc")
    req = RunRequest("r1", {"x": 3, "seed": 7}, {"x": 3})
    assert execute_run(_ok, settings, req) == DONE
    store = RunStore(tmp_path)
    meta = store.meta("r1")
    assert meta["seed"] == 7 and meta["attempts"] == 1 and meta["git_commit"] == "abc"
    assert {"version", "device", "started", "finished", "last_attempt_s"} <= set(meta)
    assert 0 <= meta["last_attempt_cpu_s"]  # the process's CPU time over the attempt
    assert store.request("r1") == req and store.result("r1").scalars == {"y": 6.0}
    assert execute_run(_boom, settings, req) == DONE  # idempotent: nothing runs again
    assert store.meta("r1")["attempts"] == 1


def test_failure_is_recorded_with_traceback(tmp_path):
    settings = Settings(tmp_path)
    assert execute_run(_boom, settings, RunRequest("bad", {"x": 1})) == FAILED
    store = RunStore(tmp_path)
    assert store.status("bad") == FAILED
    assert "Traceback" in (tmp_path / "bad" / "traceback.txt").read_text()
    assert store.error("bad") == "RuntimeError: poisoned config"


def test_collect_writes_tidy_tables(tmp_path):
    settings = Settings(tmp_path / "runs")
    execute_run(_ok, settings, RunRequest("a", {"x": 1, "g": {"k": [1, 2]}}, {"x": 1}))
    execute_run(_boom, settings, RunRequest("b", {"x": 2, "g": {"k": [1, 2]}}, {"x": 2}))
    paths = collect(RunStore(tmp_path / "runs"), tmp_path)
    rows = read_rows(paths["summary"])
    assert [r["run_id"] for r in rows] == ["a", "b"]
    assert rows[0]["status"] == "DONE" and rows[0]["metric.y"] == 2.0
    assert rows[1]["status"] == "FAILED" and rows[1]["metric.y"] is None
    assert rows[1]["error"] == "RuntimeError: poisoned config"
    assert rows[0]["config.g.k"] == [1, 2]
    assert read_rows(paths["spectra"]) == [{"run_id": "a", "index": 0, "value": 1.5}]
    assert read_rows(paths["metrics"]) == [{"run_id": "a", "step": 1, "v": 1}]
    json.dumps(rows, default=str)
