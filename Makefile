PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test reproduce bench lint

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev]"
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/safeclf run configs/quickstart.yaml

test: install
	$(BIN)/pytest
	$(BIN)/python -m safeclf.ci_configs

reproduce: install
	$(BIN)/python -m safeclf.ci_configs --full
	@for f in benchmarks/reproduce_*.py; do [ -e "$$f" ] || continue; echo "== $$f"; $(BIN)/python $$f || exit 1; done

bench: install
	$(BIN)/pip install -q -e ".[dev,bench]"
	@for f in benchmarks/*.py; do case $$f in */reproduce_*) continue;; esac; echo "== $$f"; $(BIN)/python $$f || exit 1; done

lint: install
	$(BIN)/ruff check safeclf tests benchmarks
