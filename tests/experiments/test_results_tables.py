"""`tools/results_tables.py` rebuilds the docs' results tables and the README's per-paper
summary lines from run folders."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from bottlenecklab.experiments import EXPERIMENTS, Claim, count_states, expected_states
from bottlenecklab.experiments._point_times import PointTimes
from bottlenecklab.experiments.leaky_resnet import hamiltonian_vs_depth as hvd
from bottlenecklab.report import PAPERS
from bottlenecklab.sweeps import RunStore

TOOL = Path(__file__).resolve().parents[2] / "tools" / "results_tables.py"
spec = importlib.util.spec_from_file_location("results_tables", TOOL)
results_tables = importlib.util.module_from_spec(spec)
spec.loader.exec_module(results_tables)

FLAGSHIP = hvd.EXPERIMENT.name


def _files(tmp_path: Path) -> tuple[Path, Path]:
    page, readme = tmp_path / "results.md", tmp_path / "README.md"
    page.write_text(f"a\n{results_tables.BEGIN}\nSTALE\n{results_tables.END}\nb\n")
    readme.write_text(
        f"c\n{results_tables.SUMMARY_BEGIN}\nSTALE\n{results_tables.SUMMARY_END}\nd\n"
    )
    return page, readme


def test_tables_and_summary_come_from_the_run(smoke_record, tmp_path) -> None:
    *_, out, record = smoke_record(FLAGSHIP)
    text = results_tables.tables(out.parent)
    assert f"`{FLAGSHIP}`" in text
    # every claim that is not passed is listed with its state
    for c in record.claims:
        if c.state not in ("passed", "reported"):
            assert f"`{c.id}`: {c.state}" in text
    page, readme = _files(tmp_path)
    args = [str(out.parent), "--page", str(page), "--readme", str(readme)]
    assert results_tables.main(args) == 0
    new = page.read_text()
    assert "STALE" not in new and f"`{FLAGSHIP}`" in new and new.endswith("b\n")
    lines = readme.read_text().splitlines()
    assert "STALE" not in lines and lines[-1] == "d"
    (line,) = [x for x in lines if x.startswith("- **")]  # one paper: 000
    counts = results_tables._cell(count_states(record.claims))
    assert line.startswith(f"- **000** {PAPERS['000']} — 1 experiment: {counts} (")


def test_paper_lines_add_up_the_experiments_of_each_paper() -> None:
    rows = [
        ("000 Fig 1a", {"reported": 1, "passed": 4, "failed": 0}, 600.0),
        ("001 Fig 1", {"passed": 0, "not-converged": 5}, 60.0),
        ("000 §1.4", {"passed": 5, "failed": 2, "reported": 0}, 1200.0),
    ]
    text = results_tables.paper_lines(rows, "quick")
    assert text.splitlines() == [
        "`bottlenecklab reproduce` (quick preset), 3 experiments:",
        "",
        f"- **000** {PAPERS['000']} — 2 experiments: 9 passed, 2 failed, 1 reported"
        " (30 min of points).",
        f"- **001** {PAPERS['001']} — 1 experiment: 5 not converged (1 min of points).",
    ]


def test_a_folder_without_runs_is_one_line(tmp_path, capsys) -> None:
    page, readme = _files(tmp_path)
    args = [str(tmp_path / "none"), "--page", str(page), "--readme", str(readme)]
    assert results_tables.main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run folders" in err


def test_a_readme_without_markers_writes_nothing(smoke_record, tmp_path, capsys) -> None:
    *_, out, _ = smoke_record(FLAGSHIP)
    page, readme = _files(tmp_path)
    readme.write_text("no markers\n")
    before = page.read_text()
    args = [str(out.parent), "--page", str(page), "--readme", str(readme)]
    assert results_tables.main(args) == 2
    assert "summary:begin" in capsys.readouterr().err
    assert page.read_text() == before and readme.read_text() == "no markers\n"


def test_a_page_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        results_tables.replace_section("no markers", "x")


def test_the_default_files_carry_their_markers() -> None:
    root = TOOL.parents[1]
    page = (root / "docs" / "reproduction.md").read_text()
    readme = (root / "README.md").read_text()
    assert results_tables.replace_section(page, "x").count(results_tables.BEGIN) == 1
    new = results_tables.replace_section(
        readme, "x", results_tables.SUMMARY_BEGIN, results_tables.SUMMARY_END
    )
    assert new.count(results_tables.SUMMARY_BEGIN) == 1 and len(new) < len(readme)


def test_experiments_not_in_the_run_are_named(smoke_record) -> None:
    *_, out, record = smoke_record(FLAGSHIP)
    recs = results_tables.records(out.parent)
    line = results_tables.missing(recs)
    assert line.startswith(f"Not in this run ({len(EXPERIMENTS) - 1}): ")
    assert f"`{FLAGSHIP}`" not in line and "`l2/width-plateau-digits`" in line
    assert line in results_tables.tables(recs) and line in results_tables.summary(recs)


@pytest.mark.parametrize("state", ["passed", "not-converged", "failed"])
def test_a_quick_claim_in_a_state_test_slow_does_not_expect_is_marked(state) -> None:
    want = expected_states(FLAGSHIP, hvd.FROM_BELOW.id, True)
    claim = Claim(hvd.FROM_BELOW.id, "000", "x", "y", None, state == "passed", state=state)
    text = results_tables._unexpected(FLAGSHIP, claim)
    assert bool(text) == (state not in want)
    assert not text or all(w in text for w in want)


def test_times_writes_the_point_times_of_the_run(smoke_record, tmp_path) -> None:
    *_, out, record = smoke_record(FLAGSHIP)
    page, readme = _files(tmp_path)
    times = tmp_path / "point_times.json"
    args = [str(out.parent), "--page", str(page), "--readme", str(readme), "--times", str(times)]
    assert results_tables.main(args) == 0
    table = PointTimes(json.loads(times.read_text()))
    rows = table.presets["smoke"][FLAGSHIP]
    assert len(rows) == len(record.points) and all(r["seconds"] >= 0 for r in rows)
    request = RunStore(out / "points").request(rows[0]["run_id"])
    assert table.seconds("smoke", request) == rows[0]["seconds"]


def test_times_to_an_unwritable_path_is_one_line_and_writes_nothing(
    smoke_record, tmp_path, capsys
) -> None:
    *_, out, _ = smoke_record(FLAGSHIP)
    page, readme = _files(tmp_path)
    before = page.read_text(), readme.read_text()
    times = page / "point_times.json"  # under a file: not writable
    args = [str(out.parent), "--page", str(page), "--readme", str(readme), "--times", str(times)]
    assert results_tables.main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("results_tables: ") and "\n" not in err
    assert (page.read_text(), readme.read_text()) == before and not times.exists()
