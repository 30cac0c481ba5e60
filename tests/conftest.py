"""Shared test set-up: 16 virtual CPU devices for the compile checks, and the test data."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

# Before anything imports jax: the CPU client reads this once, when it starts.
_flags = re.sub(r"--xla_force_host_platform_device_count=\d+", "", os.environ.get("XLA_FLAGS", ""))
os.environ["XLA_FLAGS"] = f"{_flags} --xla_force_host_platform_device_count=16".strip()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"


def manifest() -> list[dict]:
    data = json.loads((TESTDATA / "manifest.json").read_text())
    return data if isinstance(data, list) else data["entries"]
