"""One smoke run per experiment, shared by every test module of this folder."""

from __future__ import annotations

import pytest

from bottlenecklab.experiments import get, resolve_config, run_experiment
from bottlenecklab.report import render_run


@pytest.fixture(scope="session")
def smoke_record(tmp_path_factory):
    """`name -> (experiment, config, out, record)` of its smoke run (report rendered), cached."""
    cache: dict[str, tuple] = {}

    def run(name: str):
        if name not in cache:
            exp = get(name)
            cfg = resolve_config(exp, "smoke")
            out = tmp_path_factory.mktemp(name.replace("/", "_")) / "run"
            record = run_experiment(exp, cfg, out, preset="smoke", progress=False)
            render_run(record)
            cache[name] = (exp, cfg, out, record)
        return cache[name]

    return run
