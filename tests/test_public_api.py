"""The public faces of `bottlenecklab.measure` and `bottlenecklab.theory`: concept modules,
each name exported once."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import pytest

import bottlenecklab.measure as measure
import bottlenecklab.theory as theory


def _concepts(package: types.ModuleType) -> dict[str, types.ModuleType]:
    """The public submodules of `package` (its concept modules)."""
    return {
        info.name: importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
        if not info.name.startswith("_")
    }


PACKAGES = {p.__name__: p for p in (measure, theory)}
CONCEPTS = {name: _concepts(p) for name, p in PACKAGES.items()}
FACES = [(p, c) for p in PACKAGES for c in sorted(CONCEPTS[p])]


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_public_name_belongs_to_exactly_one_concept(package: str) -> None:
    names = [n for module in CONCEPTS[package].values() for n in module.__all__]
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(PACKAGES[package].__all__)


@pytest.mark.parametrize(("package", "concept"), FACES)
def test_a_concept_module_is_a_curated_face(package: str, concept: str) -> None:
    module = CONCEPTS[package][concept]
    doc = inspect.getdoc(module) or ""
    assert len(doc.split()) >= 10  # says what the concept is
    for name in module.__all__:
        # the package exports the very object the concept module does
        assert getattr(PACKAGES[package], name) is getattr(module, name)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_package_names_are_grouped_by_concept_in_module_order(package: str) -> None:
    concepts = CONCEPTS[package].values()
    grouped = [n for module in concepts for n in module.__all__]
    order = {n: i for i, n in enumerate(PACKAGES[package].__all__)}
    starts = [min(order[n] for n in m.__all__) for m in concepts]
    assert sorted(order[n] for n in grouped) == list(range(len(grouped)))
    for module, start in zip(concepts, starts):
        assert sorted(order[n] for n in module.__all__) == list(
            range(start, start + len(module.__all__))
        )


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_concept_module_shadows_a_name(package: str) -> None:
    # a module named like a function would replace it on the package
    assert not set(CONCEPTS[package]) & set(PACKAGES[package].__all__)
    for concept, module in CONCEPTS[package].items():
        assert getattr(PACKAGES[package], concept) is module


def test_one_gradient_norm() -> None:
    assert not hasattr(measure, "loss_grad_norm")
    assert measure.gradient_norm is measure.convergence.gradient_norm


@pytest.mark.parametrize(("old", "new"), [("thm4_layer_window", "speed_window")])
def test_an_old_name_is_a_deprecated_alias(old: str, new: str) -> None:
    with pytest.warns(DeprecationWarning, match=new):
        alias = getattr(theory, old)
    assert alias is getattr(theory, new)
    assert old not in theory.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute"):
        theory.no_such_name  # noqa: B018


def test_paper_numbered_names_are_gone() -> None:
    for old in ("eq6", "prop1_sweep", "prop34_terms", "thm31_bound", "example20_weights"):
        assert not hasattr(theory, old)
