"""Ctrl-C in the command line: every command ends with exit 130 (128 + SIGINT, what a shell
reports for a command Ctrl-C ended), no traceback, no core, no half-written output.

From the script's start (`install`, called by `shardy_convert.__main__.run` before click and
the commands are imported) until a command runs, SIGINT ends the process at once: nothing
needs cleaning up yet. While the command runs (`command_running`, the group's `invoke`), SIGINT
raises KeyboardInterrupt (once no import is in progress: see ir/interrupts.py), so `finally`
blocks clean up on the way out, and the group's error boundary calls `interrupted()`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import NoReturn

from ..ir.interrupts import outside_imports

# Seconds a Ctrl-C's KeyboardInterrupt has to end the command before the process ends anyway.
_INTERRUPT_GRACE = 2.0
_running = False  # a command is running: SIGINT raises KeyboardInterrupt


def _on_sigint() -> None:
    if not _running:
        interrupted()
    # Ends the process should the exception not reach the error boundary in time (code that
    # caught it by mistake, jaxlib's or ours).
    timer = threading.Timer(_INTERRUPT_GRACE, interrupted, kwargs={"flush": False})
    timer.daemon = True
    timer.start()
    raise KeyboardInterrupt


_HANDLER = outside_imports(_on_sigint)


def install() -> None:
    """Takes SIGINT for the rest of the process, unless it is ignored (a shell's background
    job: it stays ignored)."""
    if signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, None):
        signal.signal(signal.SIGINT, _HANDLER)


@contextlib.contextmanager
def command_running() -> Iterator[None]:
    """While a command runs, SIGINT raises KeyboardInterrupt. Also when the group is invoked
    without the script (`python -m`, click's test runner): the handler is installed for the
    command's time only, in the main thread."""
    global _running
    saved = signal.getsignal(signal.SIGINT)
    own = threading.current_thread() is threading.main_thread() and saved not in (
        signal.SIG_IGN,
        None,
        _HANDLER,
    )
    if own:
        signal.signal(signal.SIGINT, _HANDLER)
    _running = True
    try:
        yield
    finally:
        _running = False
        if own:
            signal.signal(signal.SIGINT, saved)


def interrupted(flush: bool = True) -> NoReturn:
    """Ctrl-C (SIGINT) ends any command with exit 130 (128 + SIGINT, the shell's convention),
    quietly: the `finally` blocks between the interrupted code and here have run (worker
    processes are killed), a temporary output file is removed (outputs are replaced
    atomically, so none is half-written) and what was written whole is flushed. The
    interpreter is then left without its teardown: jaxlib's compile threads may still be
    running, and tearing the interpreter down under them crashed the process (SIGSEGV)."""
    import os

    output = sys.modules.get("shardy_convert.formats.output")  # not imported: nothing written
    if output is not None:
        output.remove_partial_outputs()
    for stream in (sys.stdout, sys.stderr) if flush else ():
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(130)
