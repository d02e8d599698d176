# hbserver — the three commands of CONTRACT §1, plus the lock files they install from.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Dependencies come from the hashed lock files in requirements/ (refresh them with `make lock`).
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml requirements/dev.txt | sha1sum | cut -c1-12)
TOOLS := .cache/tools
TOOLS_STAMP := $(TOOLS)/.installed-$(shell cat requirements/tools.txt | sha1sum | cut -c1-12)
COMPILE := $(VENV)/bin/uv pip compile --quiet --universal --generate-hashes --python-version 3.11

.PHONY: run test wrk bench profile fuzz lint lock tools services browser-deps prometheus dashboard-preview clean

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r requirements/dev.txt
	$(PY) -m pip install --quiet --no-deps -e .
	@rm -f $(VENV)/.installed-* && touch $@

# hadolint, checkov and kubernetes-validate in a venv of their own (tests/deploy uses them).
$(TOOLS_STAMP): requirements/tools.txt
	@rm -rf $(TOOLS) && $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --require-hashes -r requirements/tools.txt
	@touch $@

# tests/deploy rebuilds the image's layout with Debian's python3.11 (python:3.11-slim's stand-in,
# runnable by an unprivileged user); under CI=true a missing one is installed.
tools: $(TOOLS_STAMP)
	@/usr/bin/python3.11 -c "import ensurepip, venv" 2>/dev/null || [ "$$CI" != true ] || \
		(apt-get update -qq && apt-get install -y -qq python3-venv)

# Serve on 0.0.0.0:8000 with the embedded defaults.
run: $(STAMP)
	$(VENV)/bin/hbserver

# The whole suite; under CI=true missing services are started and nothing is skipped silently.
test: $(STAMP) services browser-deps tools prometheus wrk
	$(PY) -m ruff check hbserver tests bench
	$(PY) -m pytest

# Debian's wrk: make bench drives the server with it, and tests/test_bench_varied.py checks its Lua scripts.
wrk:
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk)

bench: $(STAMP) wrk
	$(PY) -m bench.run

# Where the server's CPU goes, by stage, for PROFILE_SCENARIOS (default amp and auction): py-spy (from
# `make tools`) samples the server under wrk load; the tables go to bench/results/profile.md (bench/PROFILE.md).
profile: $(STAMP) tools wrk
	$(PY) -m bench.profile $${PROFILE_SCENARIOS:-amp auction} --output bench/results/profile.md

# The fuzz suite with random examples for FUZZ_SECONDS (default 600); make test runs a fixed, short set.
fuzz: $(STAMP)
	@bash scripts/fuzz.sh

lint: $(STAMP)
	$(PY) -m ruff check hbserver tests bench

# Re-resolve the lock files from pyproject.toml and requirements/tools.in (newest versions
# within the declared bounds, hashes for every platform), then reinstall.
lock: $(STAMP)
	$(COMPILE) pyproject.toml -o requirements/runtime.txt
	$(COMPILE) pyproject.toml --extra test --extra bench -o requirements/dev.txt
	$(COMPILE) requirements/tools.in -o requirements/tools.txt

# PostgreSQL and Redis for the tests that use them (started only when down).
services:
	@bash scripts/services.sh

# Chromium (Debian), prebid-universal-creative@1.17.2 and a Prebid.js 11.36.0 PBS-only bundle (npm pack into .cache/npm/) for tests/e2e/browser.
browser-deps:
	@bash scripts/browser-deps.sh

# Debian's prometheus package (prometheus, promtool) for tests/observability; its service is not started.
prometheus:
	@bash scripts/prometheus.sh

# The Grafana dashboard rendered from a real Prometheus scraping hbserver under load: bench/results/dashboard.png.
dashboard-preview: $(STAMP) prometheus
	$(PY) -m bench.dashboard_preview

clean:
	rm -rf $(VENV) $(TOOLS) build *.egg-info .pytest_cache .ruff_cache
