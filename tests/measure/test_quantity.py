"""The declared quantities (`measure.Quantity`): one name each, a rank names its rule, and
the rank table of `docs/add-a-quantity.md` lists every rule-bearing quantity."""

from __future__ import annotations

from pathlib import Path

import pytest

from bottlenecklab import measure
from bottlenecklab.measure import Quantity

DOC = Path(__file__).parents[2] / "docs" / "add-a-quantity.md"
DECLARED = [
    getattr(measure, n) for n in measure.__all__ if isinstance(getattr(measure, n), Quantity)
]


def test_every_quantity_has_one_name() -> None:
    names = [q.name for q in DECLARED]
    assert len(names) == len(set(names)) and len(names) >= 40


@pytest.mark.parametrize("q", [q for q in DECLARED if q.units == "rank"], ids=str)
def test_a_rank_names_its_rule(q: Quantity) -> None:
    assert q.rule is not None


@pytest.mark.parametrize("q", [q for q in DECLARED if q.rule is not None], ids=str)
def test_the_docs_list_every_rank_rule(q: Quantity) -> None:
    assert f"| `{q.name}` |" in DOC.read_text()


@pytest.mark.parametrize("q", DECLARED, ids=str)
def test_a_declaration_says_what_it_is(q: Quantity) -> None:
    assert q.doc.strip() and q.over.strip() and q.units.strip() and callable(q.function)
