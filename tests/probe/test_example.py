"""Smoke test of `examples/probe_digits.py`: a few training steps, then the whole
`bottlenecklab analyze` path it documents (factory + weights-only state dict + .npz)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "probe_digits.py"


def test_example_runs_end_to_end(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    monkeypatch.chdir(tmp_path)
    spec = importlib.util.spec_from_file_location("probe_digits", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "STEPS", 20)
    assert module.main() == 0
    out = tmp_path / "runs" / "probe-digits" / "analysis"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["capture"] == "fx" and summary["loss"] is not None
    assert (out / "figures" / "rank_vs_depth.png").is_file() and (out / "report.html").is_file()
