"""The documentation site in a real browser: the site built by `mkdocs build --strict`
(the build of `make test`, passed in `BOTTLENECKLAB_DOCS_SITE`, or built here into a
temporary folder) is served by `http.server` on 127.0.0.1 and opened in Debian's headless
Chromium through Selenium, with every other host unreachable. Checks what a reader does:
search for a word and land on an API page, read a function's signature and docstring, find
what the README points to on the pages that hold it."""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
pytest.importorskip("mkdocs")

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER), reason="needs chromium and chromedriver (`make test` installs them)"
)
WAIT_S = 30


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The built site: `make test`'s build when it names one, else a strict build here."""
    given = os.environ.get("BOTTLENECKLAB_DOCS_SITE")
    if given and (ROOT / given / "index.html").is_file():
        return ROOT / given
    out = tmp_path_factory.mktemp("site")
    subprocess.run(
        # No --quiet: it hides the warnings that --strict turns into a failure.
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=True,
        timeout=300,
    )
    return out


@pytest.fixture(scope="module")
def base_url(site):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # no access log on stderr
            pass

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Quiet, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


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
        "--window-size=1280,1600",
        # Every host but 127.0.0.1 goes to a dead proxy: the site must work offline.
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=127.0.0.1",
        "--disable-dev-shm-usage",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


def _wait(driver, condition):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(condition)


def test_search_finds_an_api_page(base_url, browser):
    from selenium.webdriver.common.by import By

    browser.get(base_url + "/")
    box = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "input.md-search__input"))
    box.click()  # the search bar of the header (a wide window shows it)
    box.send_keys("Hamiltonian")
    links = _wait(
        browser,
        lambda d: [
            a.get_attribute("href")
            for a in d.find_elements(By.CSS_SELECTOR, ".md-search-result a.md-search-result__link")
        ],
    )
    assert any("/reference/" in href for href in links), links
    meta = browser.find_element(By.CSS_SELECTOR, ".md-search-result__meta").text
    assert "matching" in meta.lower(), meta

    api = next(
        a
        for a in browser.find_elements(By.CSS_SELECTOR, "a.md-search-result__link")
        if "/reference/" in a.get_attribute("href")
    )
    api.click()
    _wait(browser, lambda d: "/reference/" in d.current_url)
    assert browser.find_elements(By.CSS_SELECTOR, ".doc-object"), browser.current_url


def test_an_api_page_shows_signature_and_docstring(base_url, browser):
    from selenium.webdriver.common.by import By

    browser.get(base_url + "/reference/theory/")
    name = "bottlenecklab.theory.coi.cost_of_identity"  # the concept module's section
    heading = _wait(browser, lambda d: d.find_element(By.ID, name))
    assert "cost_of_identity" in heading.text
    after = "./following-sibling::div[contains(@class, '{}')][1]"
    signature = heading.find_element(By.XPATH, after.format("doc-signature")).text
    entry = heading.find_element(By.XPATH, after.format("doc-contents"))
    assert signature.startswith("cost_of_identity(") and "gamma" in signature, signature
    text = entry.text
    assert "cost of identity" in text.lower(), text[:300]
    params = [c.text for c in entry.find_elements(By.CSS_SELECTOR, "table td:first-child code")]
    assert {"A", "gamma", "bias"} <= set(params), params


def test_every_page_of_the_nav_loads_without_console_errors(base_url, browser):
    from selenium.webdriver.common.by import By

    browser.get(base_url + "/")
    hrefs = {
        a.get_attribute("href").split("#")[0]
        for a in browser.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary a.md-nav__link[href]")
    }
    assert len(hrefs) >= 10, hrefs
    browser.get_log("browser")  # drop what came before
    for href in sorted(hrefs):
        browser.get(href)
        assert browser.find_element(By.CSS_SELECTOR, "article h1").text, href
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


# The pages that hold what the README used to (issue 35): a section each must show and, for
# a table under it, its header and a pattern every cell of its last column must match (the
# bar of an unescaped `||theta||` splits a row, and the cells after it shift left).
MOVED = [
    (
        "reproduction",
        "every-quick-preset",
        ["experiment", "source", "reproduces", "claims", "point time"],
        r"\d+ s",
    ),
    ("performance", "speed-make-bench", ["benchmark", "measured", "target"], r"\S.*"),
    ("performance", "gpu", None, None),
    ("sweeps", "on-an-existing-ray-cluster", None, None),
    ("sweeps", "batched-ensembles", None, None),
    ("reliability", "what-is-guaranteed", None, None),
    ("convergence", "momenta-at-a-kink-the-certificates-derivatives", None, None),
    ("reference", "layout", None, None),
]


@pytest.mark.parametrize(("page", "section", "header", "last"), MOVED)
def test_a_page_moved_from_the_readme_shows_its_section(
    base_url, browser, page, section, header, last
):
    from selenium.webdriver.common.by import By

    browser.get(f"{base_url}/{page}/")
    heading = _wait(browser, lambda d: d.find_element(By.ID, section))
    assert heading.text and heading.is_displayed(), section
    nav = [
        a.get_attribute("href")
        for a in browser.find_elements(By.CSS_SELECTOR, "nav.md-nav--primary a.md-nav__link[href]")
    ]
    assert any(f"/{page}/" in href for href in nav), nav  # the page is in the navigation
    if header is None:
        return
    table = heading.find_element(By.XPATH, "./following::table[1]")
    assert [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")] == header
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert rows
    for row in rows:
        cells = [td.text for td in row.find_elements(By.CSS_SELECTOR, "td")]
        assert len(cells) == len(header) and re.fullmatch(last, cells[-1]), cells
