"""The plugin path under faults (issue 19), through `use_plugin` on xla-cpu-pjrt, each program
in a process of its own (e2e/fault_programs.py): a Ctrl-C during a conversion reaches the
program as KeyboardInterrupt; a second or late use_plugin changes nothing; passthrough never
hands XLA a program it aborts on. The wrapper given itself as the plugin:
tests/plugin/test_wrapper.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 600


def run(name: str, *args: str) -> tuple[int, dict | None, str]:
    """(exit code, the facts the program printed, its stderr)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(ROOT))
    for key in ("PJRT_DEVICE", "XLA_STABLEHLO_COMPILE", "SHARDY_CONVERT_PLUGIN"):
        env.pop(key, None)
    child = subprocess.run(
        [sys.executable, "-m", "e2e.fault_programs", name, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    lines = [x for x in child.stdout.splitlines() if x.startswith("FACTS ")]
    facts = json.loads(lines[-1].removeprefix("FACTS ")) if lines else None
    return child.returncode, facts, child.stderr


@pytest.mark.parametrize("delay", ["0.02", "0.3", "1.0"])
def test_ctrl_c_during_a_conversion_is_a_keyboard_interrupt(delay):
    """Was `ValueError: shardy-convert: the hook raised: KeyboardInterrupt`, an internal error,
    or swallowed by the in-process writer's fallback while the step ran on."""
    code, facts, err = run("ctrl_c_in_conversion", delay)
    assert code == 0, err[-3000:]
    assert facts["raised"] == "KeyboardInterrupt", facts
    assert "internal error" not in err


def test_an_uncaught_ctrl_c_during_a_conversion_ends_the_program_as_python_does():
    code, _, err = run("ctrl_c_in_conversion", "0.3", "uncaught")
    assert code == -signal.SIGINT, err[-3000:]  # Python's end for an uncaught Ctrl-C
    assert err.rstrip().endswith("KeyboardInterrupt"), err[-3000:]
    assert "ValueError" not in err
    assert "the hook raised" not in err


def test_a_second_use_plugin_changes_nothing_unless_it_asks_the_same():
    code, facts, err = run("two_calls")
    assert code == 0, err[-3000:]
    assert "use_plugin was already called" in facts["refused"]
    assert "on_error='passthrough' (was 'raise')" in facts["refused"]
    assert facts["env_kept"]
    assert facts["policy"] == "raise"
    assert facts["same_handle"]
    assert facts["converted"] >= 1  # the first handle's counters are the live ones


def test_use_plugin_after_the_runtime_started_is_refused_and_changes_nothing():
    code, facts, err = run("after_the_runtime_started")
    assert code == 0, err[-3000:]
    assert facts["refused"].startswith("UsageError: torch_xla's runtime has already started")
    assert facts["env_kept"]
    assert facts["session"] == "None"  # the wrapper's policy and counters: untouched


def test_passthrough_refuses_the_program_xla_would_abort_on():
    """Reading a live manual tensor back makes torch_xla compile a program whose argument is
    {manual}: GSPMD aborts the process on it (SIGABRT, stock torch_xla alike). It is refused
    even with passthrough: a Python error, the process alive."""
    code, facts, err = run("read_a_live_manual_tensor")
    assert code == 0, err[-3000:]
    assert "refused even with on_error='passthrough'" in facts["raised"], facts
    assert "ReplicateShardedData" in facts["raised"]
    assert facts["counters"]["passed_through"] >= 1  # the graph returning it ran with GSPMD
    assert facts["counters"]["failed"] == 1
