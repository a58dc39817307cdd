"""`make test-slow`: every quick preset gives the expected verdicts (spec `convergence.md`).

`passed` for every asserted claim except the registered findings, which must be `failed`
(a finding that starts to pass fails this test: look again, then update the registry and
the spec), and the claims the spec checks only where a finding's statement holds, which
are `not-measured` while it stands (`experiments.expected_states`); reported numbers stay
`reported`. All experiments run once, their points
sharing one process pool of one job per core (`run_experiments`, as `reproduce` does);
tens of minutes on 2 cores, so not in `make test`. `BOTTLENECKLAB_QUICK_RUNS=DIR` keeps
the run folders there (a `reproduce` folder: `tools/results_tables.py DIR` reads it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bottlenecklab.experiments import (
    EXPERIMENTS,
    Job,
    expected_states,
    get,
    resolve_config,
    run_experiments,
)
from bottlenecklab.sweeps import LocalExecutor


def expected_state(name: str, claim) -> tuple[str, ...]:
    """The verdicts a quick preset may give `claim` of experiment `name`."""
    return expected_states(name, claim.id, claim.asserted)


@pytest.fixture(scope="module")
def quick_records(tmp_path_factory):
    """Every experiment's quick-preset record, by name (one shared run)."""
    keep = os.environ.get("BOTTLENECKLAB_QUICK_RUNS")
    root = Path(keep) if keep else tmp_path_factory.mktemp("quick")
    names = sorted(EXPERIMENTS)
    jobs = [Job(get(n), resolve_config(get(n), "quick"), root / n, "quick") for n in names]
    executor = LocalExecutor(max(1, os.cpu_count() or 1))
    records = run_experiments(jobs, executor=executor, progress=False)
    return {r.name: r for r in records}


@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_quick_preset_verdicts(name, quick_records) -> None:
    record = quick_records[name]
    assert record.claims
    wrong = [
        (c.id, c.state, expected_state(name, c), c.measured, (c.certificate or {}).get("reason"))
        for c in record.claims
        if c.state not in expected_state(name, c)
    ]
    assert not wrong, wrong
