"""The report in a real browser: Debian's headless Chromium (driven by Selenium through
chromium-driver, the network switched off) opens a report built from smoke runs and checks
what a reader sees: the overview counts equal the `claims.json` files, every image has
loaded, every claim link lands on a figure, failed claims read as failed, and the console
has no error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bottlenecklab.experiments import Claim, get, resolve_config, run_experiment
from bottlenecklab.report import build_report, claim_state, render_run

webdriver = pytest.importorskip("selenium.webdriver")

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="needs chromium and chromedriver (`make test` installs them)"
)
FLAGSHIP = "leaky-resnet/hamiltonian-vs-depth"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """Smoke runs: two theory experiments (one with reported-only numbers), and the
    flagship with two seeds (an untrained network: its claims fail their convergence
    gate)."""
    root = tmp_path_factory.mktemp("report")
    runs = [
        ("leaky-resnet/coi-minima", 0),
        ("talk/kernel-vs-depth", 0),
        (FLAGSHIP, 0),
        (FLAGSHIP, 1),
    ]
    for name, seed in runs:
        exp = get(name)
        cfg = resolve_config(exp, "smoke", {} if "seed" in exp.grid else {"seed": seed})
        out = root / name / f"seed{seed}"
        render_run(run_experiment(exp, cfg, out, preset="smoke", progress=False))
    build_report(root)
    return root


@pytest.fixture(scope="module")
def browser():
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
    # No network at all: the page must render from disk alone.
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd(
        "Network.emulateNetworkConditions",
        {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
    )
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def page(report, browser):
    browser.get((report / "report.html").as_uri())
    browser.execute_script(
        "return Promise.all([...document.images].map(i => i.decode().catch(() => null)))"
    )
    return browser


def _claims_on_disk(root: Path) -> list[Claim]:
    return [Claim(**c) for f in root.rglob("claims.json") for c in json.loads(f.read_text())]


def test_overview_counts_equal_the_claims_files(report, page):
    shown = page.execute_script(
        "const n = {};"
        "document.querySelectorAll('#overview-table td[data-count]').forEach(td => {"
        "  n[td.dataset.count] = (n[td.dataset.count] || 0) + parseInt(td.innerText) });"
        "return n;"
    )
    claims = _claims_on_disk(report)
    expected = {
        s: sum(claim_state(c) == s for c in claims)
        for s in ("passed", "failed", "not-converged", "not-measured", "reported")
    }
    assert shown == expected and sum(expected.values()) == len(claims) > 0


def test_every_image_has_loaded(page):
    images = page.execute_script(
        "return [...document.images].map(i => [i.getAttribute('src'), i.naturalWidth])"
    )
    assert images and all(width > 0 for _, width in images), images


def test_every_claim_link_lands_on_a_figure(page):
    links = page.execute_script(
        "return [...document.querySelectorAll('a.figlink')].map(a => a.getAttribute('href'))"
    )
    assert links
    for href in links:
        tag, width = page.execute_script(
            "const el = document.getElementById(arguments[0]);"
            "return el ? [el.tagName, el.querySelector('img').naturalWidth] : [null, 0];",
            href.lstrip("#"),
        )
        assert tag == "FIGURE" and width > 0, href
    page.find_element("css selector", "a.figlink").click()
    assert page.execute_script("return document.querySelector(':target').tagName") == "FIGURE"


def test_an_unconverged_claim_reads_as_not_converged(page):
    """The smoke preset's networks are far from a critical point: the certificate fails."""
    rows = page.find_elements("css selector", f"section[data-experiment='{FLAGSHIP}'] tr.claim")
    asserted = [r for r in rows if r.get_attribute("data-state") != "reported"]
    assert asserted and all(r.get_attribute("data-state") == "not-converged" for r in asserted)
    badge = asserted[0].find_element("css selector", ".state")
    assert badge.text == "NOT CONVERGED"
    assert badge.value_of_css_property("background-color") == "rgba(106, 61, 154, 1)"
    assert "0 / 2" in asserted[0].text  # two seeds, neither passes


def test_a_reported_number_is_not_a_pass(page):
    rows = page.find_elements(
        "css selector", "section[data-experiment='talk/kernel-vs-depth'] tr.claim"
    )
    states = {r.get_attribute("data-state") for r in rows}
    assert "reported" in states
    reported = [r for r in rows if r.get_attribute("data-state") == "reported"]
    assert all(r.find_element("css selector", ".state").text == "REPORTED" for r in reported)


def test_seeds_are_shown_together(page):
    sections = page.find_elements("css selector", f"section[data-experiment='{FLAGSHIP}']")
    assert len(sections) == 1 and "2 seeds: 0, 1" in sections[0].text


def test_the_console_has_no_error(page):
    errors = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
