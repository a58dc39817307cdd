# Bottleneck Lab — the two commands of the README, and the benchmarks.
#   make demo   creates .venv, installs, runs one flagship quick experiment per paper, builds the report
#   make test   creates .venv if needed, installs with dev extras, runs the test suite
#   make test-slow  every quick preset, asserting its verdicts: passed, findings failed (not in `make test`)
#   make bench  speed benchmarks (never part of `make test`)
#   make docs   serves the documentation site on http://127.0.0.1:8000 (rebuilds on edits)
#   make docs-build  builds it into site/ with --strict (part of `make test`)
#   make dist   the wheel and sdist into dist/
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --constraint constraints.txt
DEMO_OUT ?= runs/demo
MKDOCS := NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs
SITE   ?= site

.PHONY: demo test test-slow bench lint clean browser docs docs-build dist

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Stamps: reinstall only when the project's metadata changes.
$(VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) -e '.[dev,ray,docs]'
	touch $@ $(VENV)/.installed

# One flagship quick preset per source document (000, 001, 002, 003, 004), then the report.
DEMO_ONLY ?= leaky-resnet/hamiltonian-vs-depth,fcnn/bottleneck-bounds,talk/kernel-vs-depth,saddle/circle-escape,l2/reformulation

demo: $(VENV)/.installed
	$(VENV)/bin/bottlenecklab reproduce --preset quick --only '$(DEMO_ONLY)' --out $(DEMO_OUT)

# The report test drives a real headless Chromium (Debian's chromium + chromium-driver).
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver; }

test: $(VENV)/.installed-dev browser
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/lint-imports
	$(MKDOCS) build --strict --site-dir $(SITE)
	BOTTLENECKLAB_DOCS_SITE=$(SITE) $(PY) -m pytest

# Every experiment's quick preset, asserting its verdicts (tests/experiments/test_quick_verdicts.py; tens of minutes).
test-slow: $(VENV)/.installed-dev
	$(PY) -m pytest -m slow

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks

# The documentation site (mkdocs.yml, docs/): --strict fails on a broken link or reference.
# `make test` builds it after lint; tests/docs/test_site.py opens that build in Chromium.
docs: $(VENV)/.installed-dev
	$(MKDOCS) serve --dev-addr 127.0.0.1:8000

docs-build: $(VENV)/.installed-dev
	$(MKDOCS) build --strict --site-dir $(SITE)

# Wheel and sdist (the version is `__version__` in src/bottlenecklab/__init__.py).
dist: $(VENV)/.installed-dev
	$(PY) -m build --no-isolation --outdir dist

clean:
	rm -rf $(VENV) build dist site src/*.egg-info .pytest_cache .ruff_cache
