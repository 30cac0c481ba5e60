"""Runs the lit/FileCheck files under tests/lit (one file per pass) from pytest: each file is
a test of its own, so a failure names its file and the summary counts every file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

LIT_DIR = ROOT / "tests" / "lit"
FILES = sorted(LIT_DIR.glob("*.mlir"))


def test_there_are_lit_files():
    assert len(FILES) >= 4, FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_lit_file(path, tmp_path):
    bin_dir = Path(sys.executable).parent
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        LIT_EXEC_ROOT=str(tmp_path),  # lit's Output/ (the %t files) goes to the temp dir
    )
    result = subprocess.run(
        [str(bin_dir / "lit"), "-v", "--skip-test-time-recording", str(path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Passed: 1" in result.stdout, result.stdout  # ran, not skipped as unsupported
