"""`python -m shardy_convert` and the `shardy-convert` script run the command line."""

import gc
import os
import sys
from typing import NoReturn

_YOUNG_THRESHOLD = 100_000  # objects alive since the last collection that start the next one
_FLUSH_FAILED = 120  # the status the interpreter's exit gives when a std stream's flush fails


def run() -> NoReturn:
    """The command line, then the end of the process without the interpreter's teardown
    (`end_process`)."""
    end_process(command_status())


def command_status() -> int:
    """Runs the command line (click's standalone mode) and returns its exit status.

    Ctrl-C is taken from the start (before click and the commands are imported): every
    command ends on it with exit 130, no traceback (cli/interrupt.py).

    Cold start: the objects the imports make (click, the commands) live as long as the
    process, and the collector's passes over them free nothing, at ~5 ms a pass on them:
    they are imported without collections and then frozen (`gc.freeze`: left out of every
    later collection). The command then imports the rest (jaxlib's MLIR, numpy, the
    converter: ~100k objects that live as long) and works on one module at a time: young
    objects are collected once 100,000 more are alive (CPython counts allocations less
    deallocations), not 700. At 700, a conversion's start made 40-60 collections that freed
    next to nothing (~3 ms; still ~3 ms at 20,000); the peak memory of a 2,170-graph dump is
    the same (125 MB). At the end, everything is frozen likewise: should the process end
    through the interpreter's exit after all (`end_process`), its collections (~20 ms each)
    would only free what the end of the process frees.
    """
    gc.disable()
    from .cli.interrupt import install

    install()
    from .cli.main import main

    gc.freeze()
    gc.set_threshold(_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    gc.enable()
    try:
        main()
    except SystemExit as e:
        return exit_status(e.code)
    finally:
        gc.freeze()
    return 0  # click's standalone mode always ends in SystemExit


def exit_status(code: object) -> int:
    """The status `sys.exit(code)` gives the process: None is 0, an int itself (its low 8
    bits, as the system keeps them; one past C's `long` is 255, as CPython gives), anything
    else is printed to stderr and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(2**63) <= code < 2**63 else 0xFF
    if sys.stderr is not None:
        print(code, file=sys.stderr)
    return 1


def end_process(status: int) -> NoReturn:
    """Ends the process with `status` as the interpreter's exit would, less its teardown.

    What the exit does that matters here is done, in its order: the `atexit` functions run
    (the CPU clients are freed, as jax frees its own; `weakref.finalize`, temporary
    directories, multiprocessing's and logging's ends run through them), then stdout and
    stderr are flushed (a closed one is left alone; one that cannot be flushed gives 120, as
    the interpreter's exit does, without its message), then C's stdio. What is left out is
    the teardown of every module and object: ~5-9 ms of a conversion of ~140 ms (jaxlib's,
    numpy's, click's and our modules, the MLIR contexts), freeing memory the end of the
    process frees anyway. `mypy` ends likewise. Also left out: C's `atexit` handlers and
    C++'s static destructors (LLVM's `outs()` buffer: nothing here writes to it), and
    `__del__` of objects in reference cycles (every file the package writes is closed
    where it is written).

    A non-daemon thread still running would be joined by the interpreter's exit (as would
    the executors of `concurrent.futures`, whose ends are registered with `threading`, not
    `atexit`), so then the process ends through that exit (`sys.exit`).
    """
    import atexit
    import threading

    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            continue
        try:
            stream.flush()
        except Exception:
            status = _FLUSH_FAILED
    _flush_c_streams()
    os._exit(status)


def _flush_c_streams() -> None:
    """C's stdio buffers (what a library printed through `printf`), which `os._exit` would
    drop."""
    ctypes = sys.modules.get("ctypes")  # imported by jaxlib and numpy; not imported for it
    if ctypes is None:
        return
    try:
        ctypes.CDLL(None).fflush(None)
    except Exception:  # no C library to look up (not Linux or macOS): nothing to flush
        return


if __name__ == "__main__":
    run()
