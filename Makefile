# make demo   create .venv if needed, install, score the reference agents on every task
# make test   create .venv if needed, install, run the test suite
# make test-fast  the suite without its slow tests (tests/slow_tests.txt: each over 0.5 s), in under 2 minutes on 2 cores
# make lint   ruff's checks and its format check over the whole tree
# make bench  create .venv if needed, install, run the benchmarks (numbers in benchmarks/results/)
# make fuzz   10,000 generated and mutated actions per env and mode, 2,000 broken requests per served fake: exceptions, internal errors, 5xx, leaks, memory, the slowest action
# make audit  every cheap policy on every env and mode, whole test splits, held to its ceiling (runs/audit)
# make conformance   gspread's own test suite live against the Sheets emulator, and its 2,116 recorded requests replayed
# make docker        the image toolbench-gym:latest (its base made from Debian's packages where it is missing)
# make docker-variants  toolbench-gym:ray and toolbench-gym:openenv (docs/cluster.md)
# make docker-test   builds the images, serves three envs from containers and plays them from here
# make docs   create .venv if needed, install the docs extra, build the documentation site into site/ (warnings fail it)

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
DOCS_STAMP := $(VENV)/.docs-stamp
PYTEST_WORKERS ?= 2
DOCKER_IMAGE ?= toolbench-gym:latest
DOCKER_CONTEXT := build/docker

.PHONY: demo test test-fast lint bench fuzz audit conformance install fixtures clean docker docker-variants docker-test docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e '.[dev,ray,openenv]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/toolbench list
	@echo
	$(BIN)/toolbench eval --agent oracle --task all --workers 2
	@echo
	$(BIN)/toolbench eval --agent random --task all --workers 2

test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup

# -m replaces the -m of pytest's addopts, so the Docker tests stay out here too.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m 'not slow and not docker'

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzzing 10000

audit: $(STAMP)
	$(BIN)/toolbench audit --workers 2 --out runs/audit

conformance: $(STAMP)
	$(BIN)/python -m conformance

# The image installs wheels built here (the build needs no package index); the base image's Python
# (Debian bookworm's 3.11) must be the one these wheels are built for.
docker: $(STAMP)
	PYTHON=$(BIN)/python docker/build.sh latest $(DOCKER_IMAGE)

docker-variants: $(STAMP)
	PYTHON=$(BIN)/python docker/build.sh ray
	PYTHON=$(BIN)/python docker/build.sh openenv

docker-test: docker docker-variants
	TOOLBENCH_DOCKER_IMAGE=$(DOCKER_IMAGE) $(BIN)/python -m pytest -m docker tests/docker

# The docs extra (MkDocs, Material, mkdocstrings) on top of the dev install: the API reference reads the
# package's source, the CLI reference imports the command line.
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

fixtures: $(STAMP)
	$(BIN)/python -m toolbench.taskgen

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
