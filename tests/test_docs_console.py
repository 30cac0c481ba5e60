"""The ```console examples of docs/ run, and print what the page shows: each block's `$ ...`
lines run in order in one shell, in a temporary folder where `testdata/` is the repository's,
and what they print (stdout and stderr, in order) is the block's other lines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TESTDATA

DOCS = TESTDATA.parent / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if "```console" in p.read_text())


def _blocks(page: Path) -> list[tuple[list[str], list[str]]]:
    """(commands, printed lines) of each console block."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", page.read_text(), re.S):
        lines = block.rstrip("\n").splitlines()
        found.append(
            (
                [x[2:] for x in lines if x.startswith("$ ")],
                [x for x in lines if not x.startswith("$ ")],
            )
        )
    return found


CASES = [
    pytest.param(page, k, id=f"{page.name}-{k}")
    for page in PAGES
    for k in range(len(_blocks(page)))
]


@pytest.mark.parametrize(("page", "index"), CASES)
def test_a_console_example_prints_what_its_page_shows(page, index, tmp_path):
    commands, printed = _blocks(page)[index]
    (tmp_path / "testdata").symlink_to(TESTDATA)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        ["bash", "-c", "\n".join(commands)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
    )
    assert result.stdout.splitlines() == printed
