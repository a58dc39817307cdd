"""The measured point times the runner orders a reproduction by (`experiments._point_times`)."""

from __future__ import annotations

import json

import pytest

from bottlenecklab.experiments._point_times import PointTimes, write_point_times
from bottlenecklab.sweeps import RunRequest

EXP = "l2/width-plateau"
TABLE = {
    "presets": {
        "quick": {
            EXP: [
                {"run_id": "a", "point": {"model.width": 2, "seed": 0}, "seconds": 10.0},
                {"run_id": "b", "point": {"model.width": 4, "seed": 0}, "seconds": 30.0},
                {"run_id": "c", "point": {"model.width": 8, "seed": 0}, "seconds": 90.0},
            ]
        }
    }
}


def _request(run_id: str, point: dict, name: str = EXP) -> RunRequest:
    return RunRequest(run_id, {}, dict(point), {"experiment": name, "point": point})


@pytest.mark.parametrize(
    ("run_id", "point", "name", "preset", "seconds"),
    [
        ("b", {"model.width": 4, "seed": 0}, EXP, "quick", 30.0),  # its own run id
        ("z", {"seed": 0, "model.width": 8}, EXP, "quick", 90.0),  # same grid values
        ("z", {"model.width": 6, "seed": 1}, EXP, "quick", 30.0),  # its experiment's median
        ("a", {"model.width": 2, "seed": 0}, "fcnn/rank-vs-depth", "quick", None),  # unknown
        ("a", {"model.width": 2, "seed": 0}, EXP, "smoke", None),  # another preset
    ],
)
def test_expected_seconds_falls_back_from_the_run_to_its_experiment(
    run_id, point, name, preset, seconds
) -> None:
    assert PointTimes(TABLE).seconds(preset, _request(run_id, point, name)) == seconds


def test_writing_keeps_the_other_presets(tmp_path) -> None:
    path = tmp_path / "point_times.json"
    write_point_times({"source": {"preset": "quick"}, **TABLE}, path)
    smoke = {"presets": {"smoke": {EXP: [{"run_id": "s", "point": {}, "seconds": 1.0}]}}}
    write_point_times({"source": {"preset": "smoke"}, **smoke}, path)
    table = PointTimes(json.loads(path.read_text()))
    assert set(table.presets) == {"quick", "smoke"}
    assert table.for_preset("smoke")(_request("s", {})) == 1.0


def test_measured_times_are_cpu_seconds_where_recorded(tmp_path) -> None:
    """A point's table entry is its CPU time (not inflated by other jobs), its wall
    time for a run recorded before CPU times were; unfinished points are left out."""
    from bottlenecklab.experiments._point_times import measured_point_times
    from bottlenecklab.sweeps import DONE, RUNNING, RunStore

    run = tmp_path / "l2" / "width-plateau"
    (run / "points").mkdir(parents=True)
    (run / "config.json").write_text("{}")
    store = RunStore(run / "points")
    metas = {
        "a": {"last_attempt_s": 50.0, "last_attempt_cpu_s": 20.0},  # run beside others
        "b": {"last_attempt_s": 30.0},  # older run: wall time only
        "c": {"last_attempt_s": 9.0, "last_attempt_cpu_s": 9.0},
    }
    for run_id, meta in metas.items():
        store.write_request(_request(run_id, {"model.width": len(run_id)}))
        store.update_meta(run_id, **meta)
        store.set_status(run_id, RUNNING if run_id == "c" else DONE)
    rows = measured_point_times(tmp_path, "quick")["presets"]["quick"][EXP]
    assert {r["run_id"]: r["seconds"] for r in rows} == {"a": 20.0, "b": 30.0}
