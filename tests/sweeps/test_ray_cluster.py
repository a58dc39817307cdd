"""A node removed mid-sweep (`ray.cluster_utils.Cluster`) loses no run."""

import threading
import time

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from bottlenecklab.sweeps import DONE, RayExecutor, RunRequest, RunStore, Settings, run_sweep  # noqa: E402
from bottlenecklab.sweeps._testing import counting_run  # noqa: E402


def test_node_removed_mid_sweep_loses_no_run(tmp_path):
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    doomed = cluster.add_node(num_cpus=2)
    cluster.add_node(num_cpus=2)
    try:
        ray.init(address=cluster.address, log_to_driver=False, include_dashboard=False)
        cluster.wait_for_nodes()
        reqs = [RunRequest(f"r{i}", {"x": i, "steps": 10, "sleep": 0.3}) for i in range(8)]
        store = RunStore(tmp_path)

        def remove_when_running():
            deadline = time.time() + 60
            while time.time() < deadline:
                if sum(store.status(r.run_id) == "RUNNING" for r in reqs) >= 4:
                    break  # both nodes are busy
                time.sleep(0.05)
            time.sleep(0.5)
            cluster.remove_node(doomed, allow_graceful=False)

        killer = threading.Thread(target=remove_when_running)
        killer.start()
        report = run_sweep(reqs, counting_run, RayExecutor(max_retries=3), Settings(tmp_path))
        killer.join()
        assert report.done == len(reqs) and report.failed == 0
        for r in reqs:
            assert store.status(r.run_id) == DONE
            assert store.result(r.run_id).scalars["acc"] == r.config["x"] * 55
        retried = [r for r in reqs if store.meta(r.run_id)["attempts"] > 1]
        assert retried, "no run was on the removed node"
        for r in retried:  # the retry resumed from the checkpoint, not from scratch
            starts = (tmp_path / r.run_id / "attempts.log").read_text().split()
            assert starts[0] == "0" and int(starts[-1]) > 0
    finally:
        ray.shutdown()
        cluster.shutdown()
