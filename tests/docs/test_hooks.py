"""The build-time hooks of the documentation site (`tools/docs_hooks.py`), without a build:
the lab-notes pages join the nav by themselves, every registered experiment is listed on
a paper page, and the command-line help is the parser's."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import SimpleNamespace

from bottlenecklab.experiments import EXPERIMENTS

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "tools" / "docs_hooks.py")
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)


def _config(docs: Path, nav: list) -> SimpleNamespace:
    return SimpleNamespace(config_file_path=str(ROOT / "mkdocs.yml"), docs_dir=str(docs), nav=nav)


def test_lab_notes_pages_join_the_nav_index_first(tmp_path):
    notes = tmp_path / "lab-notes"
    notes.mkdir()
    for name in ("l2.md", "index.md", "fcnn.md", "README.txt"):
        (notes / name).write_text("# x\n")
    nav = hooks.on_config(_config(tmp_path, [{"Home": "index.md"}])).nav
    assert nav[-1] == {"Lab notes": ["lab-notes/index.md", "lab-notes/fcnn.md", "lab-notes/l2.md"]}


def test_no_lab_notes_folder_leaves_the_nav_alone(tmp_path):
    assert hooks.on_config(_config(tmp_path, [{"Home": "index.md"}])).nav == [{"Home": "index.md"}]


def test_every_experiment_is_listed_on_a_paper_page():
    pages = "\n".join(p.read_text() for p in (ROOT / "docs" / "papers").glob("*.md"))
    markers = re.findall(r"<!--\s*experiments:\s*([0-9 ]+?)\s*-->", pages)
    tables = "\n".join(hooks._experiment_table(m.split()) for m in markers)
    missing = [name for name in EXPERIMENTS if f"| `{name}` |" not in tables]
    assert not missing, missing


def test_the_cli_help_is_the_parsers():
    text = hooks.on_page_markdown("<!-- cli-help: run -->", page=None, config=None, files=None)
    assert text.startswith("```text\nusage: bottlenecklab run") and "--resume" in text
    assert "usage: bottlenecklab [-h]" in hooks._cli_help("")


def test_table_cells_escape_markdown():
    assert hooks._cell("||theta||^2 <= 4N, k*") == "\\|\\|theta\\|\\|^2 &lt;= 4N, k\\*"
