"""Shared fixtures: tiny seeded data sets and networks (float64 unless a test says otherwise),
the smoke run of each experiment (one per session), and one local Ray cluster per session."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest
import torch
from hypothesis import settings

from bottlenecklab.models import LeakyResNetConfig
from bottlenecklab.tasks import Dataset, TeacherConfig

# The test machines have 2 shared cores; tiny matrices gain nothing from more threads.
torch.set_num_threads(1)

# `make test` must give the same verdict on every run and machine: property tests draw the
# same examples each time (`derandomize`). `HYPOTHESIS_PROFILE=explore` draws fresh random
# examples (and 10x as many) to hunt for new counterexamples.
settings.register_profile("repeatable", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=1000, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture
def tiny_data() -> Dataset:
    """A `[4, 2, 4]` MLP teacher, 24 train / 16 test samples (k* = 2)."""
    return TeacherConfig(dims=(4, 2, 4), hidden=8, n_train=24, n_test=16).build(seed=0)


@pytest.fixture
def tiny_net(tiny_data: Dataset):
    """A float64 leaky ResNet `w = 5, L = 4, L~ = 1.5` with an irregular schedule."""
    cfg = LeakyResNetConfig(width=5, depth=4, leak=1.5, schedule="irregular", init_scale=0.5)
    return cfg.build(tiny_data.d_in, tiny_data.d_out, seed=1, dtype=torch.float64)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def smoke_record(tmp_path_factory):
    """`(name, overrides={}) -> (experiment, config, out, record)`: the experiment's smoke
    run (with `--set`-style overrides) through the default executor (`LocalExecutor(1)`,
    in this process), its report rendered; run once per session and shared by every test
    that reads it (none may change its folder: copy it first)."""
    from bottlenecklab.experiments import get, resolve_config, run_experiment
    from bottlenecklab.report import render_run

    cache: dict[tuple, tuple] = {}

    def run(name: str, overrides: dict[str, object] | None = None):
        key = (name, tuple(sorted((overrides or {}).items())))
        if key not in cache:
            exp = get(name)
            cfg = resolve_config(exp, "smoke", dict(overrides or {}))
            out = tmp_path_factory.mktemp(name.replace("/", "_")) / "run"
            record = run_experiment(exp, cfg, out, preset="smoke", progress=False)
            render_run(record)
            cache[key] = (exp, cfg, out, record)
        return cache[key]

    return run


@pytest.fixture(scope="session")
def ray_cluster():
    """A real local Ray cluster, started once per session and connected to: a head node
    without CPUs and one node with 2, so 2 runs at once (`RayExecutor()` finds it).
    `tests/sweeps/test_ray_cluster.py` adds a second node and removes it mid-sweep."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )
    try:
        cluster.add_node(num_cpus=2)
        ray.init(
            address=cluster.address,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
        cluster.wait_for_nodes()
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A `slow` test (a whole quick preset, `make test-slow`) may take far longer than the
    suite's 600 s per-test timeout on a loaded 2-core machine: give it an hour."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(3600))
