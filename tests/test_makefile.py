"""The Makefile is the one interface: `make help` lists every target it documents (issue 19:
`test-e2e` was missing, its name has a digit) in one column however long the names are."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import TESTDATA

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
    assert {"test-e2e", "test-oldest", "distclean"} <= documented.keys()
    listed = {line.split()[0]: " ".join(line.split()[1:]) for line in _help()}
    assert listed == documented


def test_make_help_descriptions_start_in_one_column():
    lines = _help()
    starts = {re.match(r"\s*\S+\s+", line).end() for line in lines}
    assert len(starts) == 1, lines
