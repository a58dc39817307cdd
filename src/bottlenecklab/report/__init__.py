"""Figures, `summary.md` and the HTML report (the only package that imports matplotlib/jinja2)."""

from bottlenecklab.report._figures import figure_maker, write_figures
from bottlenecklab.report._html import PAPERS, build_report, claim_state, find_runs, report_data
from bottlenecklab.report._summary import render_run, summary_markdown, write_summary

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
