"""The probe's report in a real browser (Debian's headless Chromium via Selenium, network
off, as `test_browser.py`): every figure has loaded, the verdict and the layer table show
the summary's numbers, the bottleneck rows stand out, skipped layers are listed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from torch import nn

from bottlenecklab.probe import BottleneckProbe

webdriver = pytest.importorskip("selenium.webdriver")

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="needs chromium and chromedriver (`make test` installs them)"
)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """A planted rank-2 middle layer, and a BatchNorm the probe skips with a reason."""
    torch.manual_seed(0)
    mid = nn.Linear(12, 12, bias=False)
    with torch.no_grad():
        mid.weight.copy_(torch.randn(12, 2) @ torch.randn(2, 12) / 3)
    net = (
        nn.Sequential(
            nn.Linear(6, 12),
            nn.BatchNorm1d(12),
            nn.ReLU(),
            mid,
            nn.Identity(),
            nn.ReLU(),
            nn.Linear(12, 3),
        )
        .double()
        .eval()
    )
    X, Y = torch.randn(80, 6, dtype=torch.float64), torch.randn(80, 3, dtype=torch.float64)
    out = tmp_path_factory.mktemp("probe")
    BottleneckProbe(net, X, Y, lam=0.01).report(out)
    return out


@pytest.fixture(scope="module")
def page(report):
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1280,2000",
        "--proxy-server=127.0.0.1:9",
        "--disable-dev-shm-usage",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
    )
    driver.get((report / "report.html").as_uri())
    driver.execute_script(
        "return Promise.all([...document.images].map(i => i.decode().catch(() => null)))"
    )
    yield driver
    driver.quit()


def test_every_figure_has_loaded(page):
    images = page.execute_script(
        "return [...document.images].map(i => [i.getAttribute('src'), i.naturalWidth])"
    )
    assert len(images) == 4 and all(width > 0 for _, width in images), images


def test_verdict_and_table_show_the_summary(report, page):
    summary = json.loads((report / "summary.json").read_text())
    assert summary["bottleneck_rank"] == 2
    shown = page.find_element("css selector", "#bottleneck-rank").text
    assert shown == "2"
    assert page.find_element("css selector", "#bottleneck-verdict").text.startswith("bottleneck:")
    rows = page.find_elements("css selector", "#layer-table tr.layer")
    marked = page.find_elements("css selector", "#layer-table tr.bottleneck")
    assert len(rows) == summary["layers_analysed"] + 2  # and the input and output rows
    assert [r.find_elements("css selector", "td")[1].text for r in marked] == summary[
        "bottleneck_layers"
    ]
    assert marked[0].value_of_css_property("background-color") == "rgba(255, 244, 244, 1)"


def test_skipped_layers_are_listed(page):
    text = page.find_element("css selector", "#skipped-table").text
    assert "BatchNorm1d" in text


def test_the_console_has_no_error(page):
    errors = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
