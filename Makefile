# The two commands a new user runs: `make run` and `make test`.
# Each creates .venv and installs what it needs by itself.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
GAMES  ?= 200
SEED   ?= 1
DELAY  ?= 0.05

.PHONY: run test lint typecheck bench simulate clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: play one table of bots in the terminal, turn by turn
run: $(STAMP)
	$(BIN)/monopoly play --seed $(SEED) --delay $(DELAY)

## test: lint, type-check and the whole test suite
test: $(STAMP) lint typecheck
	$(BIN)/python -m pytest -n 2 tests

lint: $(STAMP)
	$(BIN)/ruff check libs tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

## bench: engine throughput, median of several runs
bench: $(STAMP)
	$(BIN)/python bench/engine_bench.py

## simulate: many bot games, summary on stdout
simulate: $(STAMP)
	$(BIN)/monopoly simulate --games $(GAMES) --seed $(SEED)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
