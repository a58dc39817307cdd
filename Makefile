# Bottleneck Lab — the two commands of the README, and the benchmarks.
#   make demo   creates .venv, installs, runs one flagship quick experiment per paper, builds the report
#   make test   creates .venv if needed, installs with dev extras, runs the test suite
#   make test-slow  every quick preset, asserting all its claims pass (not in `make test`)
#   make bench  speed benchmarks (never part of `make test`)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip install --quiet --constraint constraints.txt
DEMO_OUT ?= runs/demo

.PHONY: demo test test-slow bench lint clean browser

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# Stamps: reinstall only when the project's metadata changes.
$(VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PIP) -e '.[dev,ray]'
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
	$(PY) -m pytest

# Every experiment's quick preset, asserting that all its claims pass (tens of minutes).
test-slow: $(VENV)/.installed-dev
	$(PY) -m pytest -m slow

bench: $(VENV)/.installed-dev
	$(PY) -m benchmarks

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check src tests benchmarks tools
	$(VENV)/bin/ruff format --check src tests benchmarks

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
