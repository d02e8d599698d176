# hbserver — the three commands of CONTRACT §1.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha1sum | cut -c1-12)

.PHONY: run test bench lint services browser-deps clean

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	@rm -f $(VENV)/.installed-* && touch $@

# Serve on 0.0.0.0:8000 with the embedded defaults.
run: $(STAMP)
	$(VENV)/bin/hbserver

# The whole suite; under CI=true missing services are started and nothing is skipped silently.
test: $(STAMP) services browser-deps
	$(PY) -m ruff check hbserver tests bench
	$(PY) -m pytest

bench: $(STAMP)
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)
	$(PY) -m bench.run

lint: $(STAMP)
	$(PY) -m ruff check hbserver tests bench

# PostgreSQL and Redis for the tests that use them (started only when down).
services:
	@bash scripts/services.sh

# Chromium (Debian), prebid-universal-creative@1.17.2 and a Prebid.js 11.36.0 PBS-only bundle (npm pack into .cache/npm/) for tests/e2e/browser.
browser-deps:
	@bash scripts/browser-deps.sh

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
