"""The probe's report and figures: the certificate in words, the rank-vs-depth strip on
the centred representation, the rank rule's cut drawn on the spectra."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from bottlenecklab.probe import BottleneckProbe
from bottlenecklab.report import _probe as report


def _probe() -> BottleneckProbe:
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    X = torch.randn(40, 4, generator=torch.Generator().manual_seed(1))
    Y = torch.randn(40, 3, generator=torch.Generator().manual_seed(2))
    return BottleneckProbe(net.double(), X.double(), Y.double(), lam=1e-3)


def _figures(monkeypatch, probe, tmp_path) -> dict:
    figs = {}
    monkeypatch.setattr(report, "save", lambda fig, path: figs.__setitem__(path.stem, fig))
    report.probe_figures(probe.analyze(), probe.summary(), tmp_path)
    return figs


def test_certificate_in_words(tmp_path):
    probe = _probe()
    page = probe.report(tmp_path).read_text()
    verdict = probe.summary()["verdicts"]["converged"]
    assert verdict.startswith("not converged: nonsmooth stationarity")
    assert "not at a critical point" in verdict and verdict.replace(">", "&gt;") in page
    assert "{'stationarity'" not in page and "&#39;stationarity&#39;" not in page


def test_rank_vs_depth_plots_the_centred_stable_rank(monkeypatch, tmp_path):
    probe = _probe()
    ax = _figures(monkeypatch, probe, tmp_path)["rank_vs_depth"].axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    table = probe.analyze()
    np.testing.assert_array_equal(
        lines["stable rank (centred)"].get_ydata(), table["stable_rank_centered"]
    )
    np.testing.assert_array_equal(lines["rank (centred)"].get_ydata(), table["rank_centered"])


def test_spectra_draw_the_rank_cut(monkeypatch, tmp_path):
    probe = _probe()
    ax = _figures(monkeypatch, probe, tmp_path)["spectra"].axes[0]
    table = probe.analyze()
    cuts = {float(line.get_xdata()[0]) for line in ax.get_lines() if len(line.get_xdata()) == 2}
    below = [k for k, sv in zip(table["rank_centered"], table["top_sv_centered"]) if k < len(sv)]
    assert below and all(k + 0.5 in cuts for k in below)
    levels = {float(line.get_ydata()[0]) for line in ax.get_lines() if line.get_linestyle() == "--"}
    assert table.attrs["rank_cutoff"] in levels
