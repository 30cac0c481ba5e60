"""`python -m shardy_convert` and the `shardy-convert` script run the command line."""

import gc

_YOUNG_THRESHOLD = 100_000  # objects alive since the last collection that start the next one


def run() -> None:
    """The command line, Ctrl-C taken from its start (before click and the commands are
    imported): every command ends on it with exit 130, no traceback (cli/interrupt.py).

    Cold start: the objects the imports make (click, the commands) live as long as the
    process, and the collector's passes over them free nothing, at ~5 ms a pass on them:
    they are imported without collections and then frozen (`gc.freeze`: left out of every
    later collection). The command then imports the rest (jaxlib's MLIR, numpy, the
    converter: ~100k objects that live as long) and works on one module at a time: young
    objects are collected once 100,000 more are alive (CPython counts allocations less
    deallocations), not 700. At 700, a conversion's start made 40-60 collections that freed
    next to nothing (~3 ms; still ~3 ms at 20,000); the peak memory of a 2,170-graph dump is
    the same (125 MB). At the end, everything is frozen likewise: the collections of the
    interpreter's exit (~20 ms each) would only free what the end of the process frees.
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
    finally:
        gc.freeze()


if __name__ == "__main__":
    run()
