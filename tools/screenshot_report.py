"""Screenshot a built report with headless Chromium (the README's picture).

    .venv/bin/python tools/screenshot_report.py runs/demo/report.html docs/report.png

Needs Debian's `chromium` and `chromium-driver` (`make browser`) and selenium (dev extras).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


def main(report: Path, png: Path, width: int = 1280, height: int = 1500) -> None:
    """Open `report` from disk and save a `width` x `height` screenshot of its top."""
    opts = Options()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        f"--window-size={width},{height}",
    ):
        opts.add_argument(arg)
    opts.binary_location = shutil.which("chromium") or "chromium"
    driver = webdriver.Chrome(
        service=Service(shutil.which("chromedriver") or "chromedriver"), options=opts
    )
    try:
        driver.get(report.resolve().as_uri())
        png.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(png))
    finally:
        driver.quit()


if __name__ == "__main__":
    if len(sys.argv) != 3 or not Path(sys.argv[1]).is_file():
        print(
            "usage: screenshot_report.py REPORT.html OUT.png (REPORT.html must exist)",
            file=sys.stderr,
        )
        sys.exit(2)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
