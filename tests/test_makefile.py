"""The Makefile is the one interface: `make help` lists every target it documents (issue 19:
`test-e2e` was missing, its name has a digit) in one column however long the names are."""

from __future__ import annotations

import re
import subprocess

import pytest

from .conftest import TESTDATA

ROOT = TESTDATA.parent


def _documented() -> dict[str, str]:
    """Every `target: ... ## description` line of the Makefile."""
    found = {}
    for line in (ROOT / "Makefile").read_text().splitlines():
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
