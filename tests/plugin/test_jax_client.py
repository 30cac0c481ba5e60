"""The wrapper under JAX's own PJRT C API client (tests/plugin/jax_through_wrapper.py in a child
process, over xla-cpu-pjrt): JAX compiles on threads Python did not start, with a PJRT C API
newer than the wrapper's header (0.112 in jaxlib 0.10.2 against 0.81). A context kept per
thread made the first compile crash the process (SIGSEGV) while CPython tore down such a
thread's state; the wrapper's errors must reach JAX as its exceptions."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from shardy_convert.torch_xla import cpu_plugin_path
from tests.conftest import ROOT

MODULE = "tests.plugin.jax_through_wrapper"


def _child(mode: str, **env: str) -> dict:
    environ = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2", **env)
    environ.pop("XLA_FLAGS", None)  # the CPU plugin's devices, not jax's CPU backend
    done = subprocess.run(
        [sys.executable, "-m", MODULE, cpu_plugin_path(), mode],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])
    [line] = [x for x in done.stdout.splitlines() if x.startswith("FACTS ")]
    return json.loads(line.removeprefix("FACTS "))


@pytest.mark.parametrize(
    ("mode", "lowered"), [("shardy", ["sdy.sharding"]), ("gspmd", ["mhlo.sharding"])]
)
def test_jax_compiles_and_runs_through_the_wrapper(mode, lowered):
    facts = _child(mode)
    assert len(facts["devices"]) > 1, facts
    assert facts["plain"] < 1e-5, facts
    assert facts["sharded"]["lowered_with"] == lowered, facts
    assert facts["sharded"]["relative"] < 1e-5, facts
    counters = facts["counters"]
    assert counters["converted"] == 2, counters  # each program through the converter once
    assert counters["failed"] == counters["internal_errors"] == counters["gspmd_fallbacks"] == 0


def test_a_failed_compile_reaches_jax_as_its_error():
    facts = _child("gspmd", SHARDY_CONVERT_HOOK=f"{MODULE}:raising_hook")
    for step in ("plain", "sharded"):
        assert isinstance(facts[step], str), facts
        assert "jax_through_wrapper: this hook always fails" in facts[step], facts
