"""`tools/results_tables.py` rebuilds the README's results section from run folders."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "results_tables.py"
spec = importlib.util.spec_from_file_location("results_tables", TOOL)
results_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(results_tables)

FLAGSHIP = "leaky-resnet/hamiltonian-vs-depth"


def test_tables_come_from_the_run(smoke_record, tmp_path) -> None:
    *_, out, record = smoke_record(FLAGSHIP)
    text = results_tables.tables(out.parent)
    assert f"`{FLAGSHIP}`" in text
    # every claim that is not passed is listed with its state
    for c in record.claims:
        if c.state not in ("passed", "reported"):
            assert f"`{c.id}`: {c.state}" in text
    readme = tmp_path / "README.md"
    readme.write_text(f"a\n{results_tables.BEGIN}\nold\n{results_tables.END}\nb\n")
    assert results_tables.main([str(out.parent), "--readme", str(readme)]) == 0
    new = readme.read_text()
    assert "old" not in new and f"`{FLAGSHIP}`" in new and new.endswith("b\n")


def test_a_folder_without_runs_is_one_line(tmp_path, capsys) -> None:
    assert results_tables.main([str(tmp_path), "--readme", str(tmp_path / "R.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run folders" in err


def test_a_readme_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        results_tables.replace_section("no markers", "x")
