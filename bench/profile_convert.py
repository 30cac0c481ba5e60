#!/usr/bin/env python3
"""Where does `convert` spend its time? A profile of one bench module (not run by `make bench`).

    .venv/bin/python bench/profile_convert.py [MODULE] [--runs K] [--pyinstrument] [--interval S]

MODULE is a name under bench/out/ (default transformer_L96) or a path. Prints:
1. the floor (bench/floor.py: context + parse + verify + print) and `convert`, best of 3,
   unprofiled;
2. phases: inclusive wall time and call count of the converter's own functions (context,
   parse, nesting check, passes, walks, pipelines, print), timed by wrapping them in place
   -- nothing in the converter is edited, and the overhead is a few calls per phase;
3. MLIR's pass timing (`PassManager.enable_timing()`) of every pipeline convert runs:
   the project's Python passes and Shardy's C++ passes side by side;
4. with --pyinstrument, the call tree of one convert (statistical, adds overhead).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
import tempfile
import time
import types
from collections import defaultdict
from pathlib import Path

BENCH = Path(__file__).resolve().parent

STATS: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])


def _timed(label: str, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            s = STATS[label]
            s[0] += time.perf_counter() - t0
            s[1] += 1

    return wrapper


PHASES = {
    "shardy_convert.ir.parse": ["new_context", "parse_module", "print_module"],
    "shardy_convert.ir.nesting": ["check_nesting"],
    "shardy_convert.ir.pipeline": ["run_pipeline"],
    "shardy_convert.ir.walker": ["sites", "op_sites", "transform_shardings"],
    "shardy_convert.converter": ["convert_module", "_check_no_gspmd_left", "verify", "is_shardy"],
}


def _targets() -> dict[int, tuple[str, object]]:
    import importlib

    targets = {}
    for module, names in PHASES.items():
        mod = importlib.import_module(module)
        for name in names:
            fn = getattr(mod, name, None)
            if callable(fn):
                targets[id(fn)] = (f"{module.split('.')[-1]}.{name}", fn)
    return targets


def instrument() -> None:
    """Wraps the converter's phase functions wherever they were imported by name."""
    from jaxlib.mlir import passmanager

    import shardy_convert.ir.pipeline as M
    from shardy_convert.passes.registry import PASSES

    targets = _targets()
    # Replace every module-level reference (the converter imports names directly).
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("shardy_convert"):
            for attr, value in list(vars(mod).items()):
                if id(value) in targets:
                    setattr(mod, attr, _timed(targets[id(value)][0], value))
    for name, cls in PASSES.items():
        cls.run = _timed(f"pass {name}", cls.run)

    # MLIR's own per-pass timing on every PassManager the converter creates.
    def pass_manager(*args, **kwargs):
        pm = passmanager.PassManager(*args, **kwargs)
        pm.enable_timing()
        return pm

    M.passmanager = types.SimpleNamespace(PassManager=pass_manager)


def best(fn, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


class CaptureFd2:
    """MLIR prints its timing report on the C stderr: collect it."""

    def __enter__(self):
        self.file = tempfile.TemporaryFile(mode="w+b")
        sys.stderr.flush()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("module", nargs="?", default="transformer_L96")
    ap.add_argument("--pyinstrument", action="store_true")
    ap.add_argument("--interval", type=float, default=0.002)
    ap.add_argument("--runs", type=int, default=3, help="best of K for the unprofiled figures")
    args = ap.parse_args(argv)
    path = Path(args.module)
    if not path.exists():
        path = BENCH / "out" / f"{args.module}.mlir"
    text = path.read_text()

    from floor import floor_context
    from jaxlib.mlir import ir

    import shardy_convert

    def floor():
        with floor_context() as ctx:
            mod = ir.Module.parse(text, context=ctx)
            mod.operation.verify()
            mod.operation.get_asm(enable_debug_info=False)

    shardy_convert.convert((BENCH / "out" / "transformer_L8.mlir").read_text())  # warm imports
    fl, cv = best(floor, args.runs), best(lambda: shardy_convert.convert(text), args.runs)
    print(f"{path.name}: {len(text) / 1e6:.2f} MB, {text.count(chr(10))} lines")
    ratio = f"ratio {cv / fl:.2f}x (best of {args.runs})"
    print(f"  floor {fl * 1e3:.0f} ms, convert {cv * 1e3:.0f} ms, {ratio}")

    instrument()
    STATS.clear()
    with CaptureFd2() as cap:
        t0 = time.perf_counter()
        shardy_convert.convert(text)
        total = time.perf_counter() - t0
    print(f"\nphases of one instrumented convert ({total * 1e3:.0f} ms), inclusive, nested:")
    for label, (sec, n) in sorted(STATS.items(), key=lambda kv: -kv[1][0]):
        print(f"  {sec * 1e3:8.1f} ms {sec / total:6.1%}  x{n:<4} {label}")
    print("\nMLIR pass timing (each PassManager convert ran):")
    for line in cap.text.splitlines():
        if re.match(r"\s*[\d.]+ \(\s*[\d.]+%\)", line) or "Total Execution" in line:
            print("  " + line.strip())

    if args.pyinstrument:
        from jaxlib.mlir import passmanager
        from pyinstrument import Profiler

        import shardy_convert.ir.pipeline as M

        M.passmanager = passmanager  # no MLIR timing report in the middle of the tree

        p = Profiler(interval=args.interval)
        p.start()
        shardy_convert.convert(text)
        p.stop()
        print(p.output_text(unicode=False, color=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
