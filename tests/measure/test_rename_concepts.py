"""`tools/rename_concepts.py`: the call-site rewrite to the concept names (issue 35)."""

# rename-concepts: skip-file (the old names below are the test's input)

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("rename", ROOT / "tools" / "rename_concepts.py")
rename = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rename)

SOURCE = '''"""Tables: `eq6` (Fig 5), from `theory.eq6(phi)`; `theory.prop1_sweep` sweeps."""

from bottlenecklab import measure as M
from bottlenecklab.theory import circle_inputs, eq6

x = eq6(phi)  # see `thm31_bound`
d = {"eq6": 1, "theorem4": 2}
y = M.loss_grad_norm(net, X, Y, lam)
z = cfg.example20_depths
'''

EXPECTED = (
    '"""Tables: `eq6` (Fig 5), from `theory.circle_width1_speed(phi)`; '
    "`theory.coi_lower_bound_sweep`\n"
    'sweeps."""\n'
    "\n"
    "from bottlenecklab import measure as M\n"
    "from bottlenecklab.theory import circle_inputs, circle_width1_speed\n"
    "\n"
    "x = circle_width1_speed(phi)  # see `escape_low_rank_bound`\n"
    'd = {"eq6": 1, "theorem4": 2}\n'
    "y = M.gradient_norm(net, X, Y, lam)\n"
    "z = cfg.example20_depths\n"
)


def test_python_identifiers_and_code_spans_are_renamed_strings_and_claim_ids_are_not() -> None:
    # the docstring's first line got longer than the limit: reflowed at a space
    assert rename.rewrite_python(SOURCE, ROOT / "src" / "x.py") == EXPECTED


def test_the_rewrite_is_idempotent() -> None:
    once = rename.rewrite_python(SOURCE, ROOT / "src" / "x.py")
    assert rename.rewrite_python(once, ROOT / "src" / "x.py") == once


def test_a_file_that_does_not_use_the_packages_is_left_alone() -> None:
    text = "eq6 = 1\ntheorem4 = eq6 + 1\n"
    assert rename.rewrite_python(text, ROOT / "src" / "x.py") == text


def test_private_module_paths_are_renamed() -> None:
    text = (
        "from bottlenecklab.measure._l2_balance import _layer_grads\n"
        "from bottlenecklab.theory import _thm4\n"
    )
    out = rename.rewrite_python(text, ROOT / "tests" / "x.py")
    assert "bottlenecklab.measure._forces import _layer_grads" in out
    assert "from bottlenecklab.theory import _speed_window" in out


def test_markdown_code_spans_but_not_claim_ids_in_tables() -> None:
    text = (
        "- Circle: `circle_inputs`, `eq6`, `theory.prop34_terms(X, G, Ws)`.\n"
        "| `saddle/circle-escape` | `eq6` | passed |\n"
        "```python\nrows = prop1_sweep(6, 6, gen)\n```\n"
        "eq6 in plain prose stays.\n"
    )
    out = rename.rewrite_markdown(text)
    assert "`circle_width1_speed`" in out
    assert "`theory.escape_low_rank_budget(X, G, Ws)`" in out
    assert "| `eq6` | passed |" in out
    assert "rows = coi_lower_bound_sweep(6, 6, gen)" in out
    assert "eq6 in plain prose stays." in out


def test_two_old_names_merged_into_one_import_are_reported() -> None:
    text = (
        "from bottlenecklab.measure import speed_window\n"
        "from bottlenecklab.theory import speed_window\n"
    )
    assert rename.duplicate_imports(text) == ["speed_window"]
    assert rename.duplicate_imports("from a import b\nfrom a import b\n") == []


@pytest.mark.parametrize(("old", "target"), sorted(rename.NAMES.items()))
def test_the_mapping_points_at_the_public_names(old: str, target: tuple[str, str]) -> None:
    package, new = target
    module = importlib.import_module(f"bottlenecklab.{package}")
    assert new in module.__all__
    assert old not in module.__all__


@pytest.mark.parametrize(("old", "new"), sorted(rename.MODULES.items()))
def test_the_module_renames_point_at_existing_files(old: str, new: str) -> None:
    as_path = lambda name: ROOT / "src" / (name.replace(".", "/") + ".py")  # noqa: E731
    assert as_path(new).is_file()
    assert not as_path(old).exists()
