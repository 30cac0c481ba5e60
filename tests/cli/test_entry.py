"""The `shardy-convert` entry point (shardy_convert/__main__.py): the collector settings (the
imports' objects frozen, the youngest objects collected once 100,000 more are alive, collection
still on) and the end of the process without the interpreter's teardown (atexit functions run,
Python's and C's streams flushed, the status kept; a non-daemon thread still running is joined
by the interpreter's own exit). In child processes: all of it is per-process, and
`end_process` ends the process it runs in."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from shardy_convert.__main__ import exit_status
from shardy_convert.cli.main import main
from tests.conftest import TESTDATA


def _child(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True
    )


def test_the_entry_collects_young_objects_less_often_and_still_collects(tmp_path):
    out = tmp_path / "matmul.shardy.mlir"
    done = _child(
        """
        import gc, json, sys
        from shardy_convert.__main__ import _YOUNG_THRESHOLD, command_status
        sys.argv = ["shardy-convert", "convert", sys.argv[1], "-o", sys.argv[2]]
        status = command_status()
        print(json.dumps({"status": status, "enabled": gc.isenabled(),
                          "threshold": gc.get_threshold(), "young": _YOUNG_THRESHOLD,
                          "frozen": gc.get_freeze_count()}))
        """,
        str(TESTDATA / "torch_xla" / "matmul_2x4.mlir"),
        str(out),
    )
    assert done.returncode == 0, done.stderr
    state = json.loads(done.stdout.splitlines()[-1])
    assert state["status"] == 0, done.stderr
    assert state["enabled"]
    assert state["threshold"][0] == state["young"] == 100_000
    assert state["frozen"] > 10_000  # click's and the commands' objects, then everything
    assert "sdy.mesh" in out.read_text()


def test_the_entry_ends_with_the_commands_status_and_its_output_whole(tmp_path):
    """`python -m shardy_convert` (the script calls the same `run`): a dump's conversion to
    stdout, more than a pipe holds, arrives whole (as the command gives it in-process) with
    0; a usage error gives click's 2; a file that is not StableHLO gives 1 and its message."""
    source = TESTDATA / "torch_xla" / "hf_mixtral_moe.dump"
    done = subprocess.run(
        [sys.executable, "-m", "shardy_convert", "convert", str(source)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 65536
    in_process = CliRunner().invoke(main, ["convert", str(source)])
    assert in_process.exit_code == 0, in_process.output
    assert done.stdout == in_process.stdout
    assert done.stdout.endswith("## END_GRAPH\n\n")

    usage = subprocess.run(
        [sys.executable, "-m", "shardy_convert", "convert", "--no-such-option"],
        capture_output=True,
        text=True,
    )
    assert usage.returncode == 2
    assert "no such option" in usage.stderr.lower()

    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main( {\n")
    failed = subprocess.run(
        [sys.executable, "-m", "shardy_convert", "convert", str(bad), "-o", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert failed.returncode == 1
    assert str(bad) in failed.stderr
    assert not (tmp_path / "o").exists()


def test_end_process_runs_atexit_flushes_both_streams_and_keeps_the_status(tmp_path):
    marker = tmp_path / "atexit-ran"
    done = _child(
        """
        import atexit, ctypes, pathlib, sys
        from shardy_convert.__main__ import end_process
        atexit.register(lambda: pathlib.Path(sys.argv[1]).write_text("ran"))
        sys.stdout.write("python's buffer, no newline")
        sys.stderr.write("to stderr")
        libc = ctypes.CDLL(None)
        libc.printf(b" and C's buffer")  # a pipe: fully buffered by C, not yet written
        end_process(3)
        """,
        str(marker),
    )
    assert done.returncode == 3, done.stderr
    assert done.stdout == "python's buffer, no newline and C's buffer"
    assert done.stderr == "to stderr"
    assert marker.read_text() == "ran"


def test_end_process_leaves_to_the_interpreters_exit_while_a_thread_runs():
    """A non-daemon thread the interpreter's exit would join: the process ends through that
    exit, after the thread (its output is there), with the status."""
    done = _child(
        """
        import threading, time
        from shardy_convert.__main__ import end_process
        def work():
            time.sleep(0.3)
            print("the thread finished")
        threading.Thread(target=work).start()
        try:
            end_process(4)
        except SystemExit as e:
            print("through sys.exit", e.code)
            raise
        """
    )
    assert done.returncode == 4, done.stderr
    assert done.stdout.splitlines() == ["through sys.exit 4", "the thread finished"]


BROKEN_STREAM = """
    import sys
    class Broken:
        closed = False
        def write(self, s): return len(s)
        def flush(self): raise OSError("the reader went away")
    which, status, ours = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "ours"
    if which == "closed":
        sys.stdout.close()
    else:
        setattr(sys, which, Broken())
    if ours:
        from shardy_convert.__main__ import end_process
        end_process(status)
    sys.exit(status)
    """


@pytest.mark.parametrize("which", ["stdout", "stderr", "closed"])
@pytest.mark.parametrize("status", [0, 1])
def test_end_process_gives_what_the_interpreters_exit_gives_on_streams_it_cannot_flush(
    which, status
):
    """The interpreter's own exit as the oracle: 120 for a stream that cannot be flushed
    (whatever the status was), the status for a closed stdout (not flushed)."""
    own = _child(BROKEN_STREAM, which, str(status), "interpreter").returncode
    ours = _child(BROKEN_STREAM, which, str(status), "ours").returncode
    assert ours == own
    assert own == (status if which == "closed" else 120)


@pytest.mark.parametrize(
    ("code", "status", "stderr"),
    [
        (None, 0, ""),
        (0, 0, ""),
        (2, 2, ""),
        (130, 130, ""),
        (256 + 3, 3, ""),
        (-1, 255, ""),
        (2**70, 255, ""),
        ("a message", 1, "a message\n"),
    ],
)
def test_exit_status_is_what_sys_exit_gives(code, status, stderr, capsys):
    assert exit_status(code) == status
    assert capsys.readouterr().err == stderr


@pytest.mark.parametrize("code", [None, 3, 259, -1, 2**70, "a message"])
def test_exit_status_against_the_interpreters_exit(code):
    own = _child(f"import sys; sys.exit({code!r})")
    ours = _child(
        f"from shardy_convert.__main__ import end_process, exit_status; "
        f"end_process(exit_status({code!r}))"
    )
    assert ours.returncode == own.returncode
    if isinstance(code, str):  # (past C's long, Python 3.12 on also says OverflowError)
        assert ours.stderr == own.stderr == code + "\n"
