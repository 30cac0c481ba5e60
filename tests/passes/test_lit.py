"""The lit/FileCheck files under tests/lit (one file per pass, as Shardy and XLA keep them).

lit runs once a session for all the files (it runs them in parallel, as xDSL runs
`lit tests/filecheck`), and each file is still a test of its own here, so a failure names
its file and the summary counts every file. Every pass the registry names has its file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from shardy_convert.passes.registry import PASSES
from tests.conftest import ROOT

LIT_DIR = ROOT / "tests" / "lit"
FILES = sorted(LIT_DIR.glob("*.mlir"))
# All lit items on one pytest-xdist worker, so that the one lit run serves them all.
LIT = pytest.mark.xdist_group("lit")


def _stem(name: str) -> str:
    """The module stem of a registered pass: the name of its lit file."""
    return PASSES[name].__module__.rsplit(".", 1)[-1]


@pytest.mark.parametrize("name", list(PASSES))
def test_every_registered_pass_has_its_lit_file(name):
    path = LIT_DIR / f"{_stem(name)}.mlir"
    assert path.is_file(), f"pass {name} has no lit file {path.relative_to(ROOT)}"
    runs = [line for line in path.read_text().splitlines() if line.startswith("// RUN:")]
    assert any(re.search(rf"\b{re.escape(name)}\b", line) for line in runs), (
        f"no RUN line of {path.name} runs {name}"
    )


@pytest.fixture(scope="session")
def lit_results(request, tmp_path_factory) -> dict[str, dict]:
    """file name -> lit's result for it (`code`, `output`), from one `lit` run over the lit
    files this session selected."""
    chosen = sorted(
        {
            item.callspec.params["path"]
            for item in request.session.items
            if getattr(item, "originalname", None) == "test_lit_file"
        }
    )
    out = tmp_path_factory.mktemp("lit")
    bin_dir = Path(sys.executable).parent
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        LIT_EXEC_ROOT=str(out / "exec"),  # lit's Output/ (the %t files) goes to the temp dir
    )
    report = out / "results.json"
    command = [str(bin_dir / "lit"), "--skip-test-time-recording", "-q", "-o", str(report)]
    done = subprocess.run(
        [*command, *map(str, chosen or [LIT_DIR])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if not report.is_file():  # lit itself failed (a bad lit.cfg.py): say how
        pytest.fail(f"lit wrote no results (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    tests = json.loads(report.read_text())["tests"]
    return {Path(t["name"].split(" :: ", 1)[1]).name: t for t in tests}


@LIT
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_lit_file(path, lit_results):
    result = lit_results.get(path.name)
    assert result is not None, f"lit did not run {path.name}: {sorted(lit_results)}"
    # PASS, not UNSUPPORTED (skipped) or anything else: the file's RUN lines all ran and held.
    assert result["code"] == "PASS", f"{result['code']}:\n{result['output']}"
