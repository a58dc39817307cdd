"""The README is the front door (issue 35): short, every link leads to a file of the
checkout, and every page of the documentation site's navigation is linked from it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _nav_pages(node) -> list[str]:
    """Every page file of an mkdocs `nav:` tree (strings at its leaves)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [p for v in node.values() for p in _nav_pages(v)]
    return [p for item in node for p in _nav_pages(item)]


def _local_links(text: str) -> list[str]:
    return [t.split("#")[0] for t in _LINK.findall(text) if "://" not in t]


def test_the_readme_is_short() -> None:
    assert len(README.splitlines()) <= 200


def test_every_readme_link_leads_to_a_file() -> None:
    links = _local_links(README)
    assert len(links) >= 10, links
    missing = [t for t in links if not (ROOT / t).is_file()]
    assert not missing, missing


def test_every_nav_page_is_linked_from_the_readme() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    pages = {f"docs/{p}" for p in _nav_pages(nav)} | {"docs/lab-notes/index.md"}
    unlinked = sorted(pages - set(_local_links(README)))
    assert not unlinked, unlinked


def test_the_link_finder_sees_a_missing_page() -> None:
    # the counter-case of the two tests above: a link to no file is reported
    text = "see [x](docs/none.md#a) and [y](https://example.org/z.md)"
    assert _local_links(text) == ["docs/none.md"]
    assert not (ROOT / "docs/none.md").is_file()


def test_the_summary_markers_hold_one_line_per_paper() -> None:
    section = README.split("<!-- summary:begin -->")[1].split("<!-- summary:end -->")[0]
    papers = re.findall(r"^- \*\*(\d{3})\*\* ", section, flags=re.M)
    assert papers == sorted(set(papers)) and len(papers) >= 5, papers
