"""`tools/lab_notes.py` rebuilds the lab notes' measured tables from run folders."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from bottlenecklab.experiments import EXPERIMENTS

TOOL = Path(__file__).resolve().parents[2] / "tools" / "lab_notes.py"
spec = importlib.util.spec_from_file_location("lab_notes", TOOL)
lab_notes = importlib.util.module_from_spec(spec)
spec.loader.exec_module(lab_notes)

NAME = "leaky-resnet/coi-minima"


def test_the_area_page_gets_every_claim_of_the_run(smoke_record, tmp_path) -> None:
    *_, out, record = smoke_record(NAME)
    shutil.copytree(out, tmp_path / "run" / NAME)
    notes = tmp_path / "notes"
    notes.mkdir()
    page = notes / "leaky-resnet.md"
    page.write_text(f"# x\n{lab_notes.BEGIN}\nold\n{lab_notes.END}\npilots\n")
    assert lab_notes.main([str(tmp_path / "run"), "--notes", str(notes)]) == 0
    text = page.read_text()
    assert "old" not in text and text.endswith("pilots\n")
    for c in record.claims:
        assert f"| `{NAME}` | {record.meta['seed']} | `{c.id}` | {c.state} |" in text
    # the area's other experiments are named as not in the run
    others = sorted(n for n in EXPERIMENTS if n.startswith("leaky-resnet/") and n != NAME)
    assert f"Not in this run: {', '.join(f'`{n}`' for n in others)}." in text


def test_a_page_without_markers_or_no_runs_is_one_line(smoke_record, tmp_path, capsys) -> None:
    *_, out, _ = smoke_record(NAME)
    shutil.copytree(out, tmp_path / "run" / NAME)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "leaky-resnet.md").write_text("# no markers\n")
    assert lab_notes.main([str(tmp_path / "run"), "--notes", str(notes)]) == 2
    assert lab_notes.main([str(tmp_path / "empty"), "--notes", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "markers" in err and "no run folders" in err


def test_a_failed_certificate_reads_as_failed() -> None:
    """A stationarity above its threshold is written with `>`, never as if it passed."""
    from types import SimpleNamespace

    over = SimpleNamespace(certificate={"stationarity": 0.135, "threshold": 1e-4})
    under = SimpleNamespace(certificate={"stationarity": 5e-5, "threshold": 1e-4})
    assert lab_notes._cert(over) == "stationarity 0.135 > 0.0001"
    assert lab_notes._cert(under) == "stationarity 5e-05 <= 0.0001"
