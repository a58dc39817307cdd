"""`make test-slow`: every quick preset gives the expected verdicts (spec `convergence.md`).

`passed` for every asserted claim except the registered findings, which must be `failed`
(a finding that starts to pass fails this test: look again, then update the registry and
the spec); reported numbers stay `reported`. Tens of minutes on 2 cores: not in
`make test`.
"""

from __future__ import annotations

import pytest

from bottlenecklab.experiments import EXPERIMENTS, finding_of, get, resolve_config, run_experiment


def expected_state(name: str, claim) -> str:
    """The verdict a quick preset must give `claim` of experiment `name`."""
    if not claim.asserted:
        return "reported"
    return "failed" if finding_of(name, claim.id) is not None else "passed"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_quick_preset_verdicts(name, tmp_path) -> None:
    exp = get(name)
    record = run_experiment(
        exp, resolve_config(exp, "quick"), tmp_path / "run", preset="quick", progress=False
    )
    assert record.claims
    wrong = [
        (c.id, c.state, expected_state(name, c), c.measured, (c.certificate or {}).get("reason"))
        for c in record.claims
        if c.state != expected_state(name, c)
    ]
    assert not wrong, wrong
