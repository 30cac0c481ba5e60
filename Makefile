# shardy-convert: every task goes through this file (`make help` lists them).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# Editable installs: setuptools (>= 80) prints an "Editable installation ... be careful with
# folders named like your package" notice on every install; it says nothing about this project.
EDITABLE := PYTHONWARNINGS='ignore:Editable installation'
# torch 2.9.0 + torch-xla 2.9.0 (~7.5 GB) live in a venv of their own: only `make testdata`
# and the bench inputs need them.
TORCH_VENV ?= .venv-torch
TORCH_PY := $(TORCH_VENV)/bin/python
# The oldest supported jax/jaxlib (what torch-xla[pallas]==2.9.0 pins) in a venv of its own,
# made from the project's own files: `make test` runs the suite there too. Reinstalled when
# pyproject.toml or setup.py change.
JAX_OLDEST ?= 0.7.1
OLDEST_VENV ?= .venv-jax-oldest
OLDEST_PY := $(OLDEST_VENV)/bin/python

.DEFAULT_GOAL := help
.PHONY: help install quick test test-e2e test-oldest lint format testdata golden bench clean distclean

# Every target with a `## ` description, names padded to the longest one.
help: ## list the targets
	@grep -hE '^[A-Za-z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' \
	  '{n[NR] = $$1; d[NR] = $$2; if (length($$1) > w) w = length($$1)} \
	   END {for (i = 1; i <= NR; i++) printf "  %-" w "s  %s\n", n[i], d[i]}'

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

install: $(PY) ## create .venv and install shardy-convert with its test tools (editable)
	$(EDITABLE) $(PIP) install --quiet -e '.[test]'
	@$(VENV)/bin/shardy-convert --version

quick: lint ## ruff, then the suite without the slow compile proofs (lit included; no torch_xla, no oldest jax)
	$(PY) -m pytest -q -m "not slow"

test: lint ## ruff, then the whole test suite (unit, property, fuzz, lit/FileCheck, compile checks on 16 CPU devices, torch_xla end to end), then the suite again on the oldest supported jax
	$(PY) -m pytest -q
	$(MAKE) test-e2e
	$(MAKE) test-oldest

# The e2e suite, the test data and the plugin example also need the test tools and the
# xla-cpu-pjrt plugin in the torch venv: every target that uses the venv depends on this stamp.
TORCH_E2E := $(TORCH_VENV)/.e2e-installed
$(TORCH_E2E): $(TORCH_PY) pyproject.toml setup.py
	$(EDITABLE) $(TORCH_VENV)/bin/pip install --quiet -e '.[torch-xla,test]'
	@touch $@

test-e2e: $(TORCH_E2E) ## stock torch_xla 2.9 through the PJRT plugin wrapper on xla-cpu-pjrt vs its CPU runtime (venv .venv-torch)
	$(TORCH_PY) -m pytest -q -p no:cacheprovider e2e

OLDEST_STAMP := $(OLDEST_VENV)/.installed
$(OLDEST_STAMP): pyproject.toml setup.py
	test -x $(OLDEST_PY) || $(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/pip install --quiet --upgrade pip
	$(EDITABLE) $(OLDEST_VENV)/bin/pip install --quiet -e '.[test]' 'jax==$(JAX_OLDEST)' 'jaxlib==$(JAX_OLDEST)'
	@$(OLDEST_PY) -c "import jax, jaxlib; assert jax.__version__ == jaxlib.__version__ == '$(JAX_OLDEST)'"
	@touch $@

test-oldest: $(OLDEST_STAMP) ## the whole suite on jax/jaxlib 0.7.1, what torch-xla[pallas]==2.9.0 pins (venv .venv-jax-oldest)
	$(OLDEST_PY) -m pytest -q -p no:cacheprovider

lint: ## ruff check and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: ## ruff format and autofix
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

$(TORCH_PY):
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install --quiet --upgrade pip
	$(EDITABLE) $(TORCH_VENV)/bin/pip install --quiet -e '.[torch-xla]'

testdata: $(TORCH_E2E) ## regenerate testdata/ with real torch_xla 2.9 and JAX runs (venv .venv-torch with the torch-xla extra, ~7.5 GB, ~2 min)
	$(TORCH_PY) testdata/make_testdata.py

examples: $(TORCH_E2E) ## regenerate the inputs of the README's examples (examples/*.mlir) with real torch_xla runs (venv .venv-torch)
	$(TORCH_PY) examples/make_examples.py

golden: ## regenerate the expected outputs under testdata/golden/ from the current converter
	$(PY) testdata/make_golden.py

bench: $(PY) $(TORCH_E2E) ## benchmark: real torch_xla inputs, convert vs jaxlib's parse+verify+print floor, CLI cold start, V1->V2, hook
	$(PY) bench/run.py --torch-python $(TORCH_PY) $(BENCH_ARGS)

clean: ## remove caches and build output (keeps .venv)
	rm -rf build dist *.egg-info .pytest_cache .hypothesis .ruff_cache tests/lit/Output

distclean: clean ## also remove the venvs make built (.venv, .venv-torch ~8 GB, .venv-jax-oldest), the bench inputs and the built wrapper
	rm -rf $(VENV) $(TORCH_VENV) $(OLDEST_VENV) bench/out shardy_convert/_wrapper/*.so
