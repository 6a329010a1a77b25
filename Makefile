PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install browser run test docs check-configs reproduce bench lint

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

# numba's code compiled into the user's cache ($XDG_CACHE_HOME/safeclf/numba/<fingerprint of
# the compiled modules>, never the source tree), so that the first run does not wait for the
# compiler; again after a source changed (a few seconds when the cache holds it all).
$(VENV)/.warmed: $(VENV)/.installed $(shell find safeclf -name '*.py')
	$(BIN)/python -m safeclf.cli.warm
	touch $@

install: $(VENV)/.warmed

run: install
	$(BIN)/safeclf run configs/quickstart.yaml

# report.html's layout test renders the page in headless Chromium (the Debian package);
# `make test` installs it where it is missing and the machine allows (root or sudo).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    { $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; } >/dev/null 2>&1 \
	    || echo "warning: chromium could not be installed; the report layout test will fail"; }

# the suite on every core, a test file per worker (module fixtures are built once)
test: install browser
	$(BIN)/pytest -n auto --dist loadfile
	$(MAKE) --no-print-directory docs
	$(MAKE) --no-print-directory check-configs

# The documentation site, into build/docs (git-ignored); --strict: every warning is an error.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# Every paper table, re-checked: each config's CI profile must meet all its expectations.
check-configs: install
	$(BIN)/python benchmarks/_check_configs.py

# Every config in full, then the reproduction scripts; one table at the end (config,
# expectations met, time), also written to benchmarks/results/ (benchmarks/reproduce.sh).
reproduce: install
	$(BIN)/pip install -q -e ".[dev,bench]"
	@BIN=$(BIN) sh benchmarks/reproduce.sh

bench: install
	$(BIN)/pip install -q -e ".[dev,bench]"
	$(BIN)/pip install -q --no-deps seldonian-engine==0.8.11
	@rec=$$(mktemp); start=$$(mktemp); end=$$(mktemp); fail=""; \
	echo "== the machine at the start (benchmarks/_machine.py)"; \
	$(BIN)/python benchmarks/_machine.py | tee $$start; \
	for f in benchmarks/*.py; do case $$f in */reproduce_*|*/_*) continue;; esac; \
	  echo "== $$f"; SAFECLF_BENCH_RECORD=$$rec $(BIN)/python $$f; s=$$?; \
	  [ $$s -eq 0 ] || fail="$$fail $$f:$$s"; done; \
	echo "== the machine at the end"; $(BIN)/python benchmarks/_machine.py | tee $$end; \
	$(BIN)/python benchmarks/_summary.py $$rec $$start $$end $$fail; rc=$$?; \
	rm -f $$rec $$start $$end; exit $$rc

lint: install
	$(BIN)/ruff check safeclf tests benchmarks
