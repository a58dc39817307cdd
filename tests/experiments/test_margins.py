"""`tools/margins.py`: each claim's smallest margin against its spread over runs."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "margins.py"
spec = importlib.util.spec_from_file_location("margins", TOOL)
margins = importlib.util.module_from_spec(spec)
spec.loader.exec_module(margins)

NAME = "leaky-resnet/coi-minima"


def _copy(out: Path, root: Path) -> Path:
    target = root / NAME
    shutil.copytree(out, target)
    return target


def test_identical_runs_have_no_spread_and_a_moved_margin_is_fragile(smoke_record, tmp_path):
    *_, out, record = smoke_record(NAME)
    _copy(out, tmp_path / "a")
    b = _copy(out, tmp_path / "b")
    same = margins.rows([tmp_path / "a", tmp_path / "b"])
    with_margin = [c for c in record.claims if c.asserted and c.margin is not None]
    assert with_margin and len(same) == sum(c.asserted for c in record.claims)
    for row in same:
        c = next(c for c in record.claims if c.id == row["claim"])
        assert row["spread"] in (None, 0.0)
        assert row["robust"] == (c.state == "passed" and c.margin is not None and c.margin > 0)
    # Plant a run whose first margin sits further in by more than the smallest margin.
    claims = json.loads((b / "claims.json").read_text())
    target = next(c for c in claims if c["asserted"] and c["margin"] is not None)
    target["margin"] = target["margin"] * 3 + 1.0
    (b / "claims.json").write_text(json.dumps(claims))
    moved = {r["claim"]: r for r in margins.rows([tmp_path / "a", tmp_path / "b"])}
    assert not moved[target["id"]]["robust"]
    assert "**fragile**" in margins.table([tmp_path / "a", tmp_path / "b"])


def test_page_section_is_replaced_and_bad_folders_are_one_line(smoke_record, tmp_path, capsys):
    *_, out, _ = smoke_record(NAME)
    _copy(out, tmp_path / "a")
    page = tmp_path / "robustness.md"
    page.write_text(f"x\n{margins.BEGIN}\nold\n{margins.END}\ny\n")
    assert margins.main([str(tmp_path / "a"), "--page", str(page)]) == 0
    text = page.read_text()
    assert "old" not in text and f"`{NAME}`" in text and text.endswith("y\n")
    assert margins.main([str(tmp_path / "none"), "--page", str(page)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
