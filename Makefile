# shardy-convert: every task goes through this file (`make help` lists them).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# Editable installs: setuptools (>= 80) prints an "Editable installation ... be careful with
# folders named like your package" notice on every install; it says nothing about this project.
EDITABLE := PYTHONWARNINGS='ignore:Editable installation'
# torch 2.9.0 + torch-xla 2.9.0 (~7.5 GB) live in a venv of their own (`make install-torch`):
# the e2e suite, `make testdata`, `make examples`, the bench inputs and users' own programs.
TORCH_VENV ?= .venv-torch
TORCH_PY := $(TORCH_VENV)/bin/python
# The torchax of the torch-xla extra (pyproject.toml; tests/test_makefile.py checks they agree).
TORCHAX := 0.0.7
# The oldest supported jax/jaxlib (what torch-xla[pallas]==2.9.0 pins) in a venv of its own,
# made from the project's own files: `make test` runs the suite there too. Reinstalled when
# pyproject.toml or setup.py change.
JAX_OLDEST ?= 0.7.1
OLDEST_VENV ?= .venv-jax-oldest
OLDEST_PY := $(OLDEST_VENV)/bin/python
# The newest supported jax/jaxlib, likewise. jax 0.11 dropped Python 3.11 (pip on 3.11 resolves
# 0.10.2), so its venv is made with Python 3.12: the first that runs of `python3.12` on PATH,
# pyenv's newest 3.12 (a pyenv shim of a version that is not selected says "command not
# found"; PYENV_VERSION picks it) and the interpreters in pyenv's versions folder (pyenv not
# on PATH). NEWEST_PYTHON=/path/to/python3.12 overrides.
JAX_NEWEST ?= 0.12.0.1
NEWEST_VENV ?= .venv-jax-newest
NEWEST_PY := $(NEWEST_VENV)/bin/python
NEWEST_MINOR ?= 3.12
FIND_NEWEST_PYTHON := for p in "python$(NEWEST_MINOR)" \
	  "env PYENV_VERSION=$$(pyenv latest $(NEWEST_MINOR) 2>/dev/null) pyenv exec python$(NEWEST_MINOR)" \
	  $${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(NEWEST_MINOR).*/bin/python$(NEWEST_MINOR); do \
	  $$p -c 'import sys; print(sys.executable)' 2>/dev/null && break; done
NEWEST_PYTHON ?= $(shell $(FIND_NEWEST_PYTHON))

# pytest-xdist: the suite spread over the machine's cores (`make quick PYTEST_JOBS=0` runs it
# in one process). The workers share one lit run (tests/passes/test_lit.py).
PYTEST_JOBS ?= auto
XDIST := -n $(PYTEST_JOBS)

.DEFAULT_GOAL := help
# Every target is a task, none a file: `examples`, `testdata` and `bench` are folders too, and
# a target named like an existing folder would be "up to date" without being .PHONY.
.PHONY: help install install-torch docs quick test test-e2e test-oldest test-newest test-asan test-tsan test-sdist lint format testdata examples golden bench clean distclean

# Every target with a `## ` description, names padded to the longest one.
help: ## list the targets
	@grep -hE '^[A-Za-z0-9_.-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' \
	  '{n[NR] = $$1; d[NR] = $$2; if (length($$1) > w) w = length($$1)} \
	   END {for (i = 1; i <= NR; i++) printf "  %-" w "s  %s\n", n[i], d[i]}'

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

install: $(PY) ## create .venv and install shardy-convert with its test tools (editable)
	$(EDITABLE) $(PIP) install --quiet -e '.[test,docs]'
	@$(VENV)/bin/shardy-convert --version

# The site under docs/ (mkdocs.yml): the reference pages rewritten from the code first
# (docs/make_reference.py; tests/test_docs_reference.py fails while one is stale), then built
# with every warning an error, into build/site (`make clean` removes it).
docs: $(PY) ## regenerate the docs' reference pages from the code, then build the site with mkdocs --strict (build/site)
	$(PY) docs/make_reference.py
	$(VENV)/bin/mkdocs build --strict --site-dir build/site

quick: lint ## ruff, then the suite without the slow compile proofs (lit included; no torch_xla, no oldest jax)
	$(PY) -m pytest -q -m "not slow" $(XDIST)

test: lint ## ruff, then the whole test suite (unit, property, fuzz, lit/FileCheck, compile checks on 16 CPU devices, torch_xla end to end), the suite again on the oldest and on the newest supported jax, the wrapper under ASan/UBSan and under TSan, the docs, an install from the sdist alone
	$(PY) -m pytest -q $(XDIST)
	$(MAKE) docs
	$(MAKE) test-e2e
	$(MAKE) test-oldest
	$(MAKE) test-newest
	$(MAKE) test-asan
	$(MAKE) test-tsan
	$(MAKE) test-sdist

# The package alone, as a user without a clone installs it: `python -m build` makes the sdist
# and the wheel (build/sdist/dist), twine checks their metadata, and a fresh venv outside the
# tree gets the sdist from pip, which builds the PJRT wrapper with the C compiler; from another
# folder it then says its version, converts the README's example and loads the wrapper over
# xla-cpu-pjrt to compile that program (tests/installed_smoke.py: the installed package only).
SDIST := build/sdist
SDIST_PY := $(SDIST)/venv/bin/python
test-sdist: $(PY) ## build the sdist and wheel, twine check them, pip install the sdist into a fresh venv and run the installed command and wrapper from outside the tree
	rm -rf $(SDIST)
	$(PY) -m build --outdir $(SDIST)/dist .
	$(VENV)/bin/twine check --strict $(SDIST)/dist/*
	$(PYTHON) -m venv $(SDIST)/venv
	$(SDIST)/venv/bin/pip install --quiet --upgrade pip
	$(SDIST)/venv/bin/pip install --quiet $(SDIST)/dist/shardy_convert-*.tar.gz 'xla-cpu-pjrt==0.0.1' 'pypjrt==0.1.1'
	mkdir -p $(SDIST)/run
	cd $(SDIST)/run && ../venv/bin/shardy-convert --version
	cd $(SDIST)/run && ../venv/bin/shardy-convert convert $(abspath testdata/torch_xla/matmul_2x4.mlir) -o matmul.shardy.mlir
	grep -q 'sdy.mesh' $(SDIST)/run/matmul.shardy.mlir
	cd $(SDIST)/run && ../venv/bin/python $(abspath tests/installed_smoke.py) $(abspath testdata/torch_xla/matmul_2x4.mlir)

# The e2e suite, the test data and the plugin example also need the test tools and the
# xla-cpu-pjrt plugin in the torch venv: every target that uses the venv depends on this stamp.
TORCH_E2E := $(TORCH_VENV)/.e2e-installed
# torch-xla 2.9.0's wheel carries its own copy of torchax (0.0.6, which imports flax at import):
# whichever of the two pip writes last wins, so torchax 0.0.7 (the extra's pin) is written again
# after it. Without that, xs.shard_as fails with "Jax is required for this feature".
$(TORCH_E2E): $(TORCH_PY) pyproject.toml setup.py
	$(EDITABLE) $(TORCH_VENV)/bin/pip install --quiet -e '.[torch-xla,test]'
	$(TORCH_VENV)/bin/pip install --quiet --no-deps --force-reinstall 'torchax==$(TORCHAX)'
	$(TORCH_PY) -c "import torchax; assert torchax.__version__ == '$(TORCHAX)', torchax.__version__"
	@touch $@

install-torch: $(TORCH_E2E) ## create .venv-torch: torch 2.9.0 and torch-xla 2.9.0 beside shardy-convert and its test tools (~8 GB)

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
	$(OLDEST_PY) -m pytest -q -p no:cacheprovider $(XDIST)

NEWEST_STAMP := $(NEWEST_VENV)/.installed
$(NEWEST_STAMP): pyproject.toml setup.py
	@test -n "$(NEWEST_PYTHON)" || { echo "no Python $(NEWEST_MINOR) found (python$(NEWEST_MINOR) on PATH, or pyenv): jax $(JAX_NEWEST) needs Python >= 3.12; give NEWEST_PYTHON=..." >&2; exit 1; }
	test -x $(NEWEST_PY) || $(NEWEST_PYTHON) -m venv $(NEWEST_VENV)
	$(NEWEST_VENV)/bin/pip install --quiet --upgrade pip
	$(EDITABLE) $(NEWEST_VENV)/bin/pip install --quiet -e '.[test]' 'jax==$(JAX_NEWEST)' 'jaxlib==$(JAX_NEWEST)'
	@$(NEWEST_PY) -c "import jax, jaxlib; assert jax.__version__ == jaxlib.__version__ == '$(JAX_NEWEST)'"
	@touch $@

test-newest: $(NEWEST_STAMP) ## the whole suite on jax/jaxlib 0.12.0.1, the newest supported, on Python 3.12 (venv .venv-jax-newest)
	$(NEWEST_PY) -m pytest -q -p no:cacheprovider $(XDIST)

# The PJRT plugin wrapper (C), its own declarations of later PJRT C API versions, the test plugin.
C_SOURCES := $(wildcard shardy_convert/plugin/_wrapper/*.c shardy_convert/plugin/_wrapper/*.h tests/plugin/*.c)

lint: ## ruff check and format check; mypy on the package; clang-format check of the C (.clang-format)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/clang-format --dry-run --Werror $(C_SOURCES)

format: ## ruff format and autofix; clang-format the C
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/clang-format -i $(C_SOURCES)

# The wrapper built with AddressSanitizer and UBSan (docs/wrapper-internals.md), against the
# pjrt_c_api.h of .venv's xla-cpu-pjrt as setup.py builds it. Python is no ASan build: the ASan
# runtime is preloaded (it must come first among the libraries), with libstdc++ (without it
# ASan's __cxa_throw interceptor has nothing to call when jaxlib or torch throw a C++ exception:
# "CHECK failed ... real___cxa_throw"); leak detection off (CPython, XLA and torch keep memory to
# the end on purpose: thousands of reports none of which is the wrapper's). UBSan stops at the
# first report. SHARDY_CONVERT_WRAPPER_LIBRARY makes shardy_convert load this build.
CC ?= cc
ASAN_LIB := build/asan/libpjrt_shardy_wrapper.so
WRAPPER_C := shardy_convert/plugin/_wrapper/pjrt_shardy_wrapper.c
PJRT_INCLUDE = $(shell $(PY) -c "import importlib.util as u, pathlib as p; \
  print(p.Path(list(u.find_spec('xla_plugins.xla_cpu_pjrt').submodule_search_locations)[0], 'include'))")
ASAN_ENV = LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libstdc++.so)" \
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  SHARDY_CONVERT_WRAPPER_LIBRARY=$(abspath $(ASAN_LIB))
# The end-to-end tests that take the wrapper's paths (measured under ASan in
# docs/wrapper-internals.md; the whole e2e suite is `make test-e2e`).
ASAN_E2E ?= e2e/test_torch_xla.py::test_custom_device_order_with_tensor_parallelism \
  e2e/test_torch_xla.py::test_a_graph_with_no_shardy_form_raises_naming_graph_and_reason

$(ASAN_LIB): $(WRAPPER_C) shardy_convert/plugin/_wrapper/pjrt_later.h $(PY)
	mkdir -p $(dir $@)
	$(CC) -shared -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	  -fno-sanitize-recover=undefined -fvisibility=hidden -Wall -Wextra -Werror \
	  -isystem $(PJRT_INCLUDE) -I shardy_convert/plugin/_wrapper $(WRAPPER_C) -o $@ -ldl -lpthread

# What test-asan ran before the tests mirrored the package (tests/test_wrapper.py and
# tests/plugin/): the three plugin modules that moved in since do not load the C wrapper.
ASAN_NOT := $(foreach t,hook meshes pjrt_plugin,--ignore=tests/plugin/test_$(t).py)
test-asan: $(ASAN_LIB) $(TORCH_E2E) ## the wrapper built with ASan+UBSan: its tests, and torch_xla end to end through it (venv .venv-torch)
	$(ASAN_ENV) $(PY) -c "from shardy_convert.plugin import wrapper; \
	  assert wrapper.library_path() == '$(abspath $(ASAN_LIB))', wrapper.library_path()"
	$(ASAN_ENV) $(PY) -m pytest -q -p no:cacheprovider tests/plugin $(ASAN_NOT)
	$(ASAN_ENV) $(TORCH_PY) -m pytest -q -p no:cacheprovider $(ASAN_E2E)

# The wrapper built with ThreadSanitizer (docs/wrapper-internals.md), in a build folder of its
# own, the TSan runtime preloaded into the uninstrumented Python. Only the wrapper is
# instrumented: what CPython, numpy, jaxlib and the XLA plugin do through TSan's interceptors is
# ignored (tests/plugin/tsan.supp names those libraries, never the wrapper), so a race with a
# wrapper frame still fails. The first report stops the process (halt_on_error, exit code 66): a
# failed test, or a failed pytest. The tests: the modules that load the C wrapper, JAX's own
# client among them (it compiles on threads Python did not start).
TSAN_LIB := build/tsan/libpjrt_shardy_wrapper.so
TSAN_SUPP := tests/plugin/tsan.supp
# PYTHONMALLOC=malloc: CPython's own allocator reuses memory TSan never sees freed (a ctypes
# buffer of a finished thread handed to another thread's call reads as a race); through malloc,
# TSan sees each block freed and made anew.
TSAN_ENV = PYTHONMALLOC=malloc LD_PRELOAD="$$($(CC) -print-file-name=libtsan.so)" \
  TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=$(abspath $(TSAN_SUPP)) \
  SHARDY_CONVERT_WRAPPER_LIBRARY=$(abspath $(TSAN_LIB))
TSAN_TESTS := $(foreach t,wrapper newer_plugin jax_client,tests/plugin/test_$(t).py)

$(TSAN_LIB): $(WRAPPER_C) shardy_convert/plugin/_wrapper/pjrt_later.h $(PY)
	mkdir -p $(dir $@)
	$(CC) -shared -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=thread \
	  -fvisibility=hidden -Wall -Wextra -Werror \
	  -isystem $(PJRT_INCLUDE) -I shardy_convert/plugin/_wrapper $(WRAPPER_C) -o $@ -ldl -lpthread

test-tsan: $(TSAN_LIB) ## the wrapper built with ThreadSanitizer: its tests, JAX's own client compiling through it on its threads
	$(TSAN_ENV) $(PY) -c "from shardy_convert.plugin import wrapper; \
	  assert wrapper.library_path() == '$(abspath $(TSAN_LIB))', wrapper.library_path()"
	$(TSAN_ENV) $(PY) -m pytest -q -p no:cacheprovider $(TSAN_TESTS)

$(TORCH_PY):
	$(PYTHON) -m venv $(TORCH_VENV)
	$(TORCH_VENV)/bin/pip install --quiet --upgrade pip
	$(EDITABLE) $(TORCH_VENV)/bin/pip install --quiet -e '.[torch-xla]'

testdata: $(TORCH_E2E) ## regenerate testdata/ with real torch_xla 2.9 and JAX runs (venv .venv-torch with the torch-xla extra, ~7.5 GB, ~2 min)
	$(TORCH_PY) testdata/make_testdata.py

examples: $(TORCH_E2E) ## regenerate the inputs of the docs' examples (examples/*.mlir) with real torch_xla runs (venv .venv-torch)
	$(TORCH_PY) examples/make_examples.py

golden: ## regenerate the expected outputs under testdata/golden/ from the current converter
	$(PY) testdata/make_golden.py

# BASE=<git ref>: this tree against that ref instead, figure by figure, interleaved in one run
# (bench/compare_base.py: the ref in a temporary worktree, nothing installed).
BASE ?=
bench: $(PY) $(TORCH_E2E) ## benchmark: real torch_xla inputs, convert vs jaxlib's parse+verify+print floor, CLI cold start, V1->V2, hook; BASE=<git ref> compares this tree with that ref instead
	$(PY) bench/run.py --torch-python $(TORCH_PY) $(if $(BASE),--base-ref $(BASE)) $(BENCH_ARGS)

clean: ## remove caches and build output (keeps .venv)
	rm -rf build dist *.egg-info .pytest_cache .hypothesis .ruff_cache tests/lit/Output .mypy_cache

distclean: clean ## also remove the venvs make built (.venv, .venv-torch ~8 GB, .venv-jax-oldest, .venv-jax-newest), the bench inputs and the built wrapper
	rm -rf $(VENV) $(TORCH_VENV) $(OLDEST_VENV) $(NEWEST_VENV) bench/out shardy_convert/plugin/_wrapper/*.so
