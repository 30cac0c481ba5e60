"""Ctrl-C ends every command with exit 130, no traceback, no core, no half-written output
(issue 19: SIGINT 8 s into `check` printed `Aborted!` and died with SIGSEGV; at 3 s it exited
1). A real SIGINT to a real process, at several moments of its work on the largest real dump."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import TESTDATA
from tests.helpers import comparable_text

# preexec_fn makes Popen fork before it execs: in a worker where another test imported JAX,
# JAX's fork hook warns of threads, which cannot matter to a child that only resets SIGINT
# and execs (the suite turns warnings into errors).
pytestmark = pytest.mark.filterwarnings(r"ignore:os\.fork\(\) was called:RuntimeWarning")

MIXTRAL = TESTDATA / "torch_xla" / "hf_mixtral_moe.dump"  # 10 graphs, the largest dump
GOLDEN = TESTDATA / "golden" / "torch_xla" / "hf_mixtral_moe.dump"
COPIES = 24  # a diff long enough that every delay below falls inside it, on a fast machine too
# A convert batch as long: 24 copies took under 3 s once conversion got faster (jaxlib 0.7.1),
# 96 once convert reused its MLIR contexts.
BATCH_COPIES = 320


def _script() -> list[str]:
    """The installed command line (its console script), as a user runs it."""
    found = shutil.which("shardy-convert", path=str(Path(sys.executable).parent))
    assert found, "shardy-convert is not installed beside this Python"
    return [found]


def _inputs(tmp: Path) -> Path:
    folder = tmp / "in"
    folder.mkdir()
    for k in range(BATCH_COPIES):
        shutil.copy(MIXTRAL, folder / f"mixtral_{k}.dump")
    return folder


def _repeated(tmp: Path, *dumps: Path) -> list[str]:
    """Each dump's graphs COPIES times over in one dump: a diff long enough that the signal
    falls inside it (one Mixtral dump against its golden took under 1.5 s)."""
    paths = []
    for k, dump in enumerate(dumps):
        path = tmp / f"repeated_{k}.dump"
        path.write_text(dump.read_text() * COPIES)
        paths.append(str(path))
    return paths


def _interrupt(args: list[str], delay: float, cwd: Path, group: bool = False):
    """Runs the command, sends SIGINT after `delay` s (to its whole process group, as a
    terminal's Ctrl-C does, with `group`), returns (returncode, stderr, seconds to exit)."""
    child = subprocess.Popen(
        _script() + args,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=group,
        # A terminal's Ctrl-C reaches a process whose SIGINT is the default: a shell that runs
        # pytest in the background (`make test &`, CI runners) starts it with SIGINT ignored,
        # which every child inherits and Python then keeps.
        preexec_fn=_default_sigint,
    )
    with child:
        try:
            time.sleep(delay)
            if child.poll() is not None:
                _, err = child.communicate()
                pytest.fail(
                    f"exit {child.returncode} before the signal (make its input larger): {err}"
                )
            sent = time.monotonic()
            if group:
                os.killpg(child.pid, signal.SIGINT)
            else:
                child.send_signal(signal.SIGINT)
            _, err = child.communicate(timeout=60)
        finally:  # a child that outlived a failed assertion takes its workers with it
            if child.poll() is None and group:
                os.killpg(child.pid, signal.SIGKILL)
            elif child.poll() is None:
                child.kill()
    return child.returncode, err.decode(errors="replace"), time.monotonic() - sent


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _assert_ended_cleanly(code: int, err: str, seconds: float, cwd: Path) -> None:
    assert code == 130, f"exit {code}: {err[-2000:]}"
    assert "Traceback" not in err, err[-2000:]
    assert "Aborted!" not in err, err[-2000:]
    assert not list(cwd.glob("core*")), "a core file"
    assert seconds < 10, f"{seconds:.1f} s from SIGINT to exit"


def _assert_no_partial_outputs(out: Path) -> None:
    """Outputs are written whole or not at all: no temporary file is left, and every output
    that exists is the complete conversion."""
    leftovers = [p.name for p in out.rglob("*") if p.name.startswith(".")]
    assert not leftovers, leftovers
    for written in out.rglob("*.dump"):
        whole = comparable_text(GOLDEN.read_text())  # jaxlib releases print apart
        assert comparable_text(written.read_text()) == whole, f"{written.name} is not whole"


@pytest.mark.parametrize("delay", [0.4, 1.5, 3.0])
def test_ctrl_c_during_a_convert_batch(tmp_path, delay):
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"
    code, err, seconds = _interrupt(["convert", str(inputs), "-o", f"{out}/"], delay, tmp_path)
    _assert_ended_cleanly(code, err, seconds, tmp_path)
    if out.exists():
        _assert_no_partial_outputs(out)


def test_ctrl_c_to_the_process_group_of_a_parallel_batch(tmp_path):
    """A terminal's Ctrl-C reaches the workers too: they leave it to the parent, which ends
    them (no traceback per worker) and exits 130."""
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"
    args = ["convert", str(inputs), "-o", f"{out}/", "-j", "2"]
    code, err, seconds = _interrupt(args, 2.0, tmp_path, group=True)
    _assert_ended_cleanly(code, err, seconds, tmp_path)
    if out.exists():
        _assert_no_partial_outputs(out)


@pytest.mark.parametrize(
    ("command", "delay"),
    [
        ("v2", 1.0),
        ("inspect", 1.0),
        ("inspect", 2.5),
        ("diff", 1.5),
        ("check", 3.0),
        ("check", 8.0),  # issue 19: Aborted! and SIGSEGV
    ],
)
def test_ctrl_c_during_a_command(tmp_path, command, delay):
    inputs = sorted(str(p) for p in _inputs(tmp_path).iterdir())
    args = {
        "v2": ["v2", *inputs, "-o", f"{tmp_path / 'out'}/"],
        "inspect": ["inspect", *inputs],
        "diff": ["diff", *_repeated(tmp_path, MIXTRAL, GOLDEN)],
        "check": ["check", *inputs],
    }[command]
    code, err, seconds = _interrupt(args, delay, tmp_path)
    _assert_ended_cleanly(code, err, seconds, tmp_path)
    assert not [p for p in tmp_path.rglob(".*.tmp")]
