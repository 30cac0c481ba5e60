"""Runs the lit/FileCheck suite under tests/lit (one file per pass) from pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LIT_DIR = Path(__file__).parent / "lit"


def test_lit_suite_passes():
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    result = subprocess.run(
        [str(bin_dir / "lit"), "-q", "-v", str(LIT_DIR)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    cases = list(LIT_DIR.glob("*.mlir"))
    assert cases, "no lit cases found"
