"""What C++ writes to file descriptor 2 (LLVM's `errs()`, MLIR's diagnostics printed by a pass,
XLA's logs), captured off the terminal: under Python, not through `sys.stderr`, so only the
descriptor itself can be redirected. The MLIR pipeline (ir/) and XLA's compiles (xla/) both
need it, so it sits below both."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def cpp_stderr() -> Iterator[list[str]]:
    """What C++ writes to file descriptor 2 inside (LLVM's `errs()`, XLA's logs), kept off
    the terminal: the yielded list gets the text when the block ends. Python's own stderr is
    flushed first."""
    import tempfile  # not on the convert path's import time

    sys.stderr.flush()
    saved = os.dup(2)
    captured: list[str] = []
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield captured
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                sink.seek(0)
                captured.append(sink.read().decode("utf-8", "replace"))
    finally:
        os.close(saved)
