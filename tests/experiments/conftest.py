"""Fixtures of the experiment tests (the smoke runs, `smoke_record`, are in tests/conftest.py)."""

from __future__ import annotations

import dataclasses

import pytest

from bottlenecklab.experiments import Experiment
from bottlenecklab.training import TrainConfig

ZERO_STEPS = ({"optimizer": "adam", "steps": 0, "lr": 1e-3},)


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
