"""Ctrl-C and jaxlib's imports: a KeyboardInterrupt raised while one of jaxlib's extension
modules initializes (`import jaxlib.mlir.ir` runs Python code from nanobind's module init)
escapes nanobind as a C++ exception and kills the process (`terminate called after throwing an
instance of 'nanobind::python_error'`, SIGABRT or SIGSEGV: measured, issue 19). The SIGINT
handlers here let an import finish first: the signal is sent again a moment later."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator

_RETRY = 0.05  # seconds until a SIGINT that arrived during an import is sent again


def outside_imports(raise_interrupt: Callable[[], None]) -> Callable:
    """A SIGINT handler that calls `raise_interrupt()` (which raises KeyboardInterrupt), or,
    when the signal arrived during an import, sends SIGINT again `_RETRY` s later."""

    def on_sigint(signum, frame):
        if _importing(frame):
            retry = threading.Timer(_RETRY, os.kill, (os.getpid(), signum))
            retry.daemon = True
            retry.start()
            return
        raise_interrupt()

    return on_sigint


def _importing(frame) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def _keyboard_interrupt() -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigint_outside_imports() -> Iterator[None]:
    """For library code that imports jaxlib in the host's main thread (`use_plugin`): while it
    runs, Ctrl-C raises KeyboardInterrupt as Python's own handler does, but not inside an
    import. A host that set a SIGINT handler of its own keeps it."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    saved = signal.signal(signal.SIGINT, outside_imports(_keyboard_interrupt))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)
