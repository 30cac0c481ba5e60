"""The lit/FileCheck files under tests/lit (one file per pass, as Shardy and XLA keep them).

lit runs once a session for all the files (it runs them in parallel, as xDSL runs
`lit tests/filecheck`; once for all pytest-xdist workers too), and each file is still a test
of its own here, so a failure names its file and the summary counts every file. Every pass
the registry names has its file."""

from __future__ import annotations

import fcntl
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
    files this session selected. Under pytest-xdist the workers share it: the first one to
    need it runs lit (under a lock), the others read its results."""
    shared = tmp_path_factory.getbasetemp()
    if "PYTEST_XDIST_WORKER" in os.environ:
        shared = shared.parent  # the session's folder, above each worker's own
    report = shared / "lit" / "results.json"
    with open(shared / "lit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not report.is_file():
            _run_lit(_chosen(request.session), report)
    tests = json.loads(report.read_text())["tests"]
    return {Path(t["name"].split(" :: ", 1)[1]).name: t for t in tests}


def _chosen(session: pytest.Session) -> list[Path]:
    """The lit files whose tests this session runs (every worker collects them all)."""
    return sorted(
        {
            item.callspec.params["path"]
            for item in session.items
            if getattr(item, "originalname", None) == "test_lit_file"
        }
    )


def _run_lit(files: list[Path], report: Path) -> None:
    out = report.parent
    out.mkdir()
    bin_dir = Path(sys.executable).parent
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        LIT_EXEC_ROOT=str(out / "exec"),  # lit's Output/ (the %t files) goes to the temp dir
    )
    partial = out / "partial.json"  # renamed when whole: a worker never reads half of it
    command = [str(bin_dir / "lit"), "--skip-test-time-recording", "-q", "-o", str(partial)]
    done = subprocess.run(
        [*command, *map(str, files or [LIT_DIR])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if not partial.is_file():  # lit itself failed (a bad lit.cfg.py): say how
        pytest.fail(f"lit wrote no results (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    partial.rename(report)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_lit_file(path, lit_results):
    result = lit_results.get(path.name)
    assert result is not None, f"lit did not run {path.name}: {sorted(lit_results)}"
    # PASS, not UNSUPPORTED (skipped) or anything else: the file's RUN lines all ran and held.
    assert result["code"] == "PASS", f"{result['code']}:\n{result['output']}"
