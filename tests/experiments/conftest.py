"""One smoke run per experiment, shared by every test module of this folder."""

from __future__ import annotations

import dataclasses

import pytest

from bottlenecklab.experiments import Experiment, get, resolve_config, run_experiment
from bottlenecklab.report import render_run
from bottlenecklab.training import TrainConfig

ZERO_STEPS = ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)


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


@pytest.fixture(scope="session")
def untrained():
    """`exp -> overrides` that give every training of its config zero steps: `train`, or
    each `TrainConfig` field of an experiment whose points train differently (their
    `train` a property choosing one, e.g. `l2/reformulation`)."""

    def overrides(exp: Experiment) -> dict[str, tuple]:
        cfg = exp.config
        return {
            f"{f.name}.phases": ZERO_STEPS
            for f in dataclasses.fields(cfg)
            if isinstance(getattr(cfg, f.name), TrainConfig)
        }

    return overrides
