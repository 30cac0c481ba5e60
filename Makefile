# shardy-convert: every task goes through this file (`make help` lists them).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.DEFAULT_GOAL := help
.PHONY: help install test lint format testdata golden bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

install: $(PY) ## create .venv and install shardy-convert with its test tools (editable)
	$(PIP) install --quiet -e '.[test]'
	@$(VENV)/bin/shardy-convert --version

test: ## run the whole test suite (unit, property, lit/FileCheck, compile checks on 8 CPU devices)
	$(PY) -m pytest -q

lint: ## ruff check and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: ## ruff format and autofix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

testdata: $(PY) ## regenerate testdata/ with real torch_xla 2.9 and JAX runs (installs the torch-xla extra, ~7.5 GB)
	$(PIP) install --quiet -e '.[test,torch-xla]'
	$(PY) testdata/make_testdata.py

golden: ## regenerate the expected outputs under testdata/golden/ from the current converter
	$(PY) testdata/make_golden.py

bench: $(PY) ## benchmark: real torch_xla inputs (made with .venv-torch or the torch-xla extra), convert vs jaxlib's parse+verify+print floor, CLI cold start, V1->V2, hook
	$(PY) bench/run.py $(BENCH_ARGS)

clean: ## remove caches and build output (keeps .venv)
	rm -rf build dist *.egg-info .pytest_cache .hypothesis .ruff_cache tests/lit/Output
