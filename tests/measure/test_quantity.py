"""The declared quantities (`measure.Quantity`): one name each, a rank names its rule, and
the rank table of `docs/add-a-quantity.md` lists every rule-bearing quantity."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
import torch

from bottlenecklab import measure
from bottlenecklab.measure import Quantity
from bottlenecklab.measure._layer_ranks import layer_ranks

DOC = Path(__file__).parents[2] / "docs" / "add-a-quantity.md"


def _declared() -> list[Quantity]:
    """Every `Quantity` a `measure` module declares, on the face or off it (a quantity one
    experiment area alone reads stays in its private module)."""
    found: dict[int, Quantity] = {}
    for info in pkgutil.iter_modules(measure.__path__):
        module = importlib.import_module(f"{measure.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, Quantity):
                found[id(value)] = value
    return list(found.values())


DECLARED = _declared()


def test_every_quantity_has_one_name() -> None:
    names = [q.name for q in DECLARED]
    assert len(names) == len(set(names)) and len(names) >= 40


@pytest.mark.parametrize("q", [q for q in DECLARED if q.units == "rank"], ids=str)
def test_a_rank_names_its_rule(q: Quantity) -> None:
    assert isinstance(q.rule, measure.RankRule)


@pytest.mark.parametrize("seed", range(3))
def test_weight_and_affine_ranks_count_as_their_rules_say(seed: int) -> None:
    """`layer_ranks` counts `s_i(W) > 0.1` (`WEIGHT_RANK_RULE`), `centred_rank` centred
    `s_i > 0.2 s_1` (`AFFINE_RANK_RULE`): planted spectra read by hand."""
    g = torch.Generator().manual_seed(seed)
    U, _ = torch.linalg.qr(torch.randn(12, 12, generator=g, dtype=torch.float64))
    V, _ = torch.linalg.qr(torch.randn(8, 8, generator=g, dtype=torch.float64))
    s = torch.tensor([3.0, 1.0, 0.5, 0.2, 0.11, 0.09, 0.01, 0.0], dtype=torch.float64)
    W = U[:, :8] @ torch.diag(s) @ V.T
    assert layer_ranks([W]) == [5]
    A = W - W.mean(0) + 7.0  # an offset is no direction
    t = torch.linalg.svdvals(A - A.mean(0))
    assert measure.centred_rank(A) == int((t > 0.2 * t[0]).sum()) >= 1


@pytest.mark.parametrize("q", [q for q in DECLARED if q.rule is not None], ids=str)
def test_the_docs_list_every_rank_rule(q: Quantity) -> None:
    assert f"| `{q.name}` |" in DOC.read_text()


@pytest.mark.parametrize("q", DECLARED, ids=str)
def test_a_declaration_says_what_it_is(q: Quantity) -> None:
    assert q.doc.strip() and q.over.strip() and q.units.strip() and callable(q.function)


def test_a_family_names_its_members_and_a_measure_holds_them() -> None:
    """A family (`shape="per width"`) is one declaration; `at(w)` is its column
    `name + w`, a scalar read like any other; a `Measure` writing one member holds the
    family, one writing none is refused."""
    from bottlenecklab.experiments._spec import Measure, Measurement

    fam = Quantity("best_w", "best speed per width", print, "restarts", "speed", "per width")
    member = fam.at(64)
    assert (member.name, member.shape, member.doc) == ("best_w64", "scalar", fam.doc)
    assert fam.holds("best_w64") and not fam.holds("best_w") and not fam.holds("best_w_x")
    with pytest.raises(ValueError, match="scalar"):
        member.at(1)
    wrote = Measure(lambda m, d, c: Measurement({"best_w64": 0.5}), (fam,))
    assert wrote(None, None, None).scalars == {"best_w64": 0.5} and wrote.writes(member)
    with pytest.raises(ValueError, match="did not measure"):
        Measure(lambda m, d, c: Measurement({"other": 0.0}), (fam,))(None, None, None)
