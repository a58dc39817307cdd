"""Figures, `summary.md` and the HTML report (the only package that imports matplotlib/jinja2).

The names below are imported on first use: the experiment report's modules read the
experiment registry, the probe's page (`report._probe`, used by `BottleneckProbe.plot` and
`.report`) does not, and importing it must not load the experiments."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for type checkers and the API docs; at run time: `__getattr__`
    from bottlenecklab.report._figures import figure_maker, write_figures
    from bottlenecklab.report._html import (
        PAPERS,
        build_report,
        claim_state,
        find_runs,
        report_data,
    )
    from bottlenecklab.report._summary import render_run, summary_markdown, write_summary

_WHERE = {
    "figure_maker": "_figures",
    "write_figures": "_figures",
    "PAPERS": "_html",
    "build_report": "_html",
    "claim_state": "_html",
    "find_runs": "_html",
    "report_data": "_html",
    "render_run": "_summary",
    "summary_markdown": "_summary",
    "write_summary": "_summary",
}

__all__ = [
    "PAPERS",
    "build_report",
    "claim_state",
    "figure_maker",
    "find_runs",
    "render_run",
    "report_data",
    "summary_markdown",
    "write_figures",
    "write_summary",
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value  # found once
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
