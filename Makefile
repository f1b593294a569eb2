# make demo   create .venv if needed, install, score the reference agents on every task
# make test   create .venv if needed, install, run the test suite
# make bench  create .venv if needed, install, run the benchmarks (numbers in benchmarks/results/)
# make fuzz   10,000 mutated actions per env: exceptions, internal errors, leaks, the slowest action

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
PYTEST_WORKERS ?= 2

.PHONY: demo test bench fuzz install fixtures clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/toolbench list
	@echo
	$(BIN)/toolbench eval --agent oracle --task all --workers 2
	@echo
	$(BIN)/toolbench eval --agent random --task all --workers 2

test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS)

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzzing 10000

fixtures: $(STAMP)
	$(BIN)/python -m toolbench.taskgen

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
