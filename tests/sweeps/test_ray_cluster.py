"""A node removed mid-sweep loses no run: a second node added to the session's
`ray_cluster` (a `ray.cluster_utils.Cluster`) and removed while runs are on it."""

import json
import threading
import time

import pytest

pytest.importorskip("ray")
psutil = pytest.importorskip("psutil")

from bottlenecklab.sweeps import DONE, RayExecutor, RunRequest, RunStore, Settings, run_sweep  # noqa: E402
from bottlenecklab.sweeps._testing import counting_run  # noqa: E402


def test_node_removed_mid_sweep_loses_no_run(tmp_path, ray_cluster):
    cluster = ray_cluster  # a head without CPUs and a node with 2
    doomed = cluster.add_node(num_cpus=2)
    try:
        cluster.wait_for_nodes()
        reqs = [RunRequest(f"r{i}", {"x": i, "steps": 10, "sleep": 0.3}) for i in range(8)]
        store = RunStore(tmp_path)

        raylet = doomed.all_processes["raylet"][0].process.pid

        def on_doomed_node(run_id: str) -> bool:
            """The run's latest attempt runs in a worker process of the doomed node and is
            midway: past its first checkpoint, with steps left to resume."""
            try:
                pid = int((tmp_path / run_id / "pids.log").read_text().split()[-1])
                step = json.loads(store.checkpoint(run_id).read_text())["step"]
                return 1 <= step <= 6 and raylet in {p.pid for p in psutil.Process(pid).parents()}
            except (OSError, ValueError, IndexError, KeyError, psutil.Error):
                return False

        midway: list[str] = []  # the run seen midway on the doomed node when it was removed

        def remove_when_running():
            # Under load the runs may never all run at once: wait for one that runs on the
            # doomed node (found by its worker's pid), whatever the others do.
            deadline = time.time() + 120
            while time.time() < deadline and not midway:
                midway.extend(
                    r.run_id
                    for r in reqs
                    if store.status(r.run_id) == "RUNNING" and on_doomed_node(r.run_id)
                )
                time.sleep(0.05)
            cluster.remove_node(doomed, allow_graceful=False)

        killer = threading.Thread(target=remove_when_running)
        killer.start()
        report = run_sweep(reqs, counting_run, RayExecutor(max_retries=3), Settings(tmp_path))
        killer.join()
        assert report.done == len(reqs) and report.failed == 0
        for r in reqs:
            assert store.status(r.run_id) == DONE
            assert store.result(r.run_id).scalars["acc"] == r.config["x"] * 55
        assert midway, "no run was seen midway on the doomed node"
        retried = {r.run_id for r in reqs if store.meta(r.run_id)["attempts"] > 1}
        assert set(midway) <= retried, "a run on the removed node was not retried"
        for run_id in midway:  # its retry resumed from the checkpoint, not from scratch
            starts = (tmp_path / run_id / "attempts.log").read_text().split()
            assert starts[0] == "0" and int(starts[-1]) > 0
    finally:
        if doomed in cluster.worker_nodes:  # the test failed before the node was removed
            cluster.remove_node(doomed, allow_graceful=False)
