"""The Makefile is the one interface: `make help` lists every target it documents (issue 19:
`test-e2e` was missing, its name has a digit) in one column however long the names are, and
each target does what its line says: its recipe, as `make -n` prints it, runs the command the
description promises (issue 24: `make examples` was a silent no-op, `make distclean` removed a
path that no longer exists and left the built wrapper)."""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess

import pytest

from shardy_convert.plugin import wrapper
from tests.conftest import ROOT

MAKEFILE = (ROOT / "Makefile").read_text()


def _documented() -> dict[str, str]:
    """Every `target: ... ## description` line of the Makefile."""
    found = {}
    for line in MAKEFILE.splitlines():
        m = re.match(r"^([^\s:#=]+):[^=].*?## (.*)$", line)
        if m:
            found[m.group(1)] = m.group(2)
    return found


def _help() -> list[str]:
    out = subprocess.run(
        ["make", "--no-print-directory", "-s", "help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return out.splitlines()


def test_make_help_lists_every_documented_target():
    documented = _documented()
    assert {"test-e2e", "test-oldest", "test-newest", "distclean"} <= documented.keys()
    listed = {line.split()[0]: " ".join(line.split()[1:]) for line in _help()}
    assert listed == documented


def test_make_help_descriptions_start_in_one_column():
    lines = _help()
    starts = {re.match(r"\s*\S+\s+", line).end() for line in lines}
    assert len(starts) == 1, lines


def test_the_newest_leg_finds_a_python_312():
    """jax 0.12 needs Python >= 3.12: `make test-newest` finds one (python3.12 on PATH,
    pyenv's, or pyenv's versions folder) and makes its venv with it."""
    dry = subprocess.run(
        # -W: as if pyproject.toml had changed, so the venv's recipe shows even where it is made
        ["make", "--no-print-directory", "-s", "-n", "-W", "pyproject.toml", "test-newest"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r'test -n "([^"]*)"', dry)
    assert found, dry
    if not found.group(1):
        pytest.skip("no Python 3.12 on this machine")
    version = subprocess.run(
        [found.group(1), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert version.strip() == "(3, 12)"
    assert f"{found.group(1)} -m venv .venv-jax-newest" in dry


# What each documented target promises, as lines its recipe must run (regular expressions
# matched against `make -n` lines). A target added to the Makefile without a row here fails
# test_every_documented_target_has_a_row.
VENVS = r"\.venv \.venv-torch \.venv-jax-oldest \.venv-jax-newest"
SPREAD = r"( -n \S+)?$"  # pytest-xdist, or not
RUNS = {
    "help": [r"^grep -hE '\^\[A-Za-z0-9_\.-\]\+:\.\*## ' Makefile \| awk"],
    "install": [
        r"\.venv/bin/pip install --quiet -e '\.\[test,docs\]'$",
        r"^\.venv/bin/shardy-convert --version$",
    ],
    "quick": [
        r"^\.venv/bin/ruff check \.$",
        r"^\.venv/bin/ruff format --check \.$",
        r"^\.venv/bin/python -m pytest -q -m \"not slow\"( |$)",
    ],
    "test": [
        r"^\.venv/bin/ruff check \.$",
        r"^\.venv/bin/python -m pytest -q" + SPREAD,  # no -m, no path: every test
        r"^\.venv-torch/bin/python -m pytest -q -p no:cacheprovider e2e$",
        r"^\.venv-jax-oldest/bin/python -m pytest -q -p no:cacheprovider" + SPREAD,
        r"^\.venv-jax-newest/bin/python -m pytest -q -p no:cacheprovider" + SPREAD,
        r"^\.venv/bin/mkdocs build --strict --site-dir build/site$",
        r"SHARDY_CONVERT_WRAPPER_LIBRARY=\S*build/tsan/\S+ \.venv/bin/python -m pytest",
        r"^\.venv/bin/python -m build --outdir build/sdist/dist \.$",
    ],
    "test-e2e": [r"^\.venv-torch/bin/python -m pytest -q -p no:cacheprovider e2e$"],
    "install-torch": [
        r"\.venv-torch/bin/pip install --quiet -e '\.\[torch-xla,test\]'$",
        r"\.venv-torch/bin/pip install --quiet --no-deps --force-reinstall 'torchax==[\d.]+'$",
    ],
    "docs": [
        r"^\.venv/bin/python docs/make_reference\.py$",
        r"^\.venv/bin/mkdocs build --strict --site-dir build/site$",
    ],
    "test-oldest": [r"^\.venv-jax-oldest/bin/python -m pytest -q -p no:cacheprovider" + SPREAD],
    "test-newest": [r"^\.venv-jax-newest/bin/python -m pytest -q -p no:cacheprovider" + SPREAD],
    "test-asan": [
        r"SHARDY_CONVERT_WRAPPER_LIBRARY=\S*build/asan/libpjrt_shardy_wrapper\.so "
        r"\.venv/bin/python -m pytest -q -p no:cacheprovider tests/plugin\b",
        r"SHARDY_CONVERT_WRAPPER_LIBRARY=\S*build/asan/libpjrt_shardy_wrapper\.so "
        r"\.venv-torch/bin/python -m pytest -q -p no:cacheprovider e2e/",
    ],
    "test-tsan": [
        r"TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=\S*tests/plugin/tsan\.supp ",
        r"SHARDY_CONVERT_WRAPPER_LIBRARY=\S*build/tsan/libpjrt_shardy_wrapper\.so "
        r"\.venv/bin/python -m pytest -q -p no:cacheprovider tests/plugin/test_wrapper\.py "
        r"tests/plugin/test_newer_plugin\.py tests/plugin/test_jax_client\.py$",
    ],
    "test-sdist": [
        r"^\.venv/bin/python -m build --outdir build/sdist/dist \.$",
        r"^\.venv/bin/twine check --strict build/sdist/dist/\*$",
        r"build/sdist/venv/bin/pip install --quiet build/sdist/dist/shardy_convert-\*\.tar\.gz ",
        r"\.\./venv/bin/shardy-convert --version$",
        r"\.\./venv/bin/python \S+/tests/installed_smoke\.py \S+/matmul_2x4\.mlir$",
    ],
    "lint": [
        r"^\.venv/bin/ruff check \.$",
        r"^\.venv/bin/ruff format --check \.$",
        r"^\.venv/bin/mypy$",  # the package, as [tool.mypy] in pyproject.toml says
        r"^\.venv/bin/clang-format --dry-run --Werror \S+\.c",
    ],
    "format": [
        r"^\.venv/bin/ruff format \.$",
        r"^\.venv/bin/ruff check --fix \.$",
        r"^\.venv/bin/clang-format -i \S+\.c",
    ],
    "testdata": [r"^\.venv-torch/bin/python testdata/make_testdata\.py$"],
    "examples": [r"^\.venv-torch/bin/python examples/make_examples\.py$"],
    "golden": [r"^\.venv/bin/python testdata/make_golden\.py$"],
    "bench": [r"^\.venv/bin/python bench/run\.py --torch-python \.venv-torch/bin/python\b"],
    "clean": [
        r"^rm -rf build dist \*\.egg-info \.pytest_cache \.hypothesis \.ruff_cache tests/lit/"
    ],
    "distclean": [
        r"^rm -rf build dist ",  # clean first
        rf"^rm -rf {VENVS} bench/out shardy_convert/plugin/_wrapper/\*\.so$",
    ],
}
# The venvs and stamps the targets depend on, taken as made and old (`make -o`), so that a
# dry run prints the target's own recipe whatever state this checkout's venvs are in.
MADE = [
    ".venv/bin/python",
    ".venv-torch/bin/python",
    ".venv-torch/.e2e-installed",
    ".venv-jax-oldest/.installed",
    ".venv-jax-newest/.installed",
    "build/asan/libpjrt_shardy_wrapper.so",
    "build/tsan/libpjrt_shardy_wrapper.so",
]


# A target that exists to make one of those files: that file is not taken as made, and its
# recipe shows as if pyproject.toml had changed (`make -W`), whether or not it is made here.
MAKES = {"install-torch": ".venv-torch/.e2e-installed"}


def _dry_run(target: str) -> list[str]:
    """The lines `make TARGET` would run (`make -n` runs nothing; a recursive $(MAKE) is
    dry-run too)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    old = [arg for path in MADE if path != MAKES.get(target) for arg in ("-o", path)]
    fresh = ["-W", "pyproject.toml"] if target in MAKES else []
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", *old, *fresh, target],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_every_documented_target_has_a_row():
    assert sorted(RUNS) == sorted(_documented())


@pytest.mark.parametrize("target", sorted(RUNS))
def test_target_runs_what_its_description_promises(target):
    lines = _dry_run(target)
    missing = [want for want in RUNS[target] if not any(re.search(want, x) for x in lines)]
    assert not missing, f"make -n {target} printed:\n" + "\n".join(lines)


def test_every_documented_target_is_phony():
    """A target named like a file or folder that exists (examples/, testdata/, bench/) would be
    "up to date" and run nothing unless it is .PHONY."""
    phony = set(re.search(r"^\.PHONY: (.*)$", MAKEFILE, re.M).group(1).split())
    assert set(_documented()) <= phony, sorted(set(_documented()) - phony)


def test_clean_keeps_the_venv_and_distclean_removes_the_built_wrapper():
    assert not any(re.search(r"\.venv", line) for line in _dry_run("clean"))
    removed = [line.split()[2:] for line in _dry_run("distclean") if line.startswith("rm -rf ")]
    globs = [path for paths in removed for path in paths]
    built = os.path.relpath(wrapper.LIBRARY, ROOT)  # where setup.py builds the wrapper
    assert any(fnmatch.fnmatch(built, g) for g in globs), (built, globs)
    # No stale path: what is removed under a folder of the tree is under a folder that exists.
    stale = [g for g in globs if "/" in g and not (ROOT / os.path.dirname(g)).is_dir()]
    stale = [g for g in stale if not g.startswith((".venv", "bench/out"))]
    assert not stale, stale


def test_the_torchax_written_over_torch_xlas_copy_is_the_extras():
    """torch-xla 2.9.0's wheel carries torchax 0.0.6: the torch venv's recipe writes the extra's
    torchax again after it, the version the extra pins."""
    pinned = re.search(r'"torchax==([^"]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert re.search(rf"^TORCHAX := {re.escape(pinned)}$", MAKEFILE, re.M), pinned


def test_the_tsan_build_is_instrumented_and_its_suppressions_never_name_the_wrapper():
    """`make test-tsan`'s wrapper is built with -fsanitize=thread in a folder of its own, and
    every suppression names an uninstrumented library's interceptor calls: none can hide a
    race in the wrapper's own code."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    built = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", "-o", ".venv/bin/python",
         "build/tsan/libpjrt_shardy_wrapper.so"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert re.search(
        r"-fsanitize=thread\b.*pjrt_shardy_wrapper\.c -o build/tsan/libpjrt_shardy_wrapper\.so",
        built.replace("\\\n", " "),
    ), built
    lines = (ROOT / "tests" / "plugin" / "tsan.supp").read_text().splitlines()
    rules = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert rules
    for rule in rules:
        kind, _, library = rule.partition(":")
        assert kind == "called_from_lib", rule
        assert "shardy" not in library, rule
        assert "wrapper" not in library, rule
