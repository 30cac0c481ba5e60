#!/usr/bin/env python3
"""A big torch_xla dump through `shardy-convert convert`: wall time and peak RSS against the
floor, in the same run (issue 24: a 300 MB dump ran 247 s and peaked at 6.7 GB, read whole).

    .venv/bin/python bench/bench_big_dump.py [--mb 300] [--source testdata/torch_xla/X.dump]
                                             [--keep DIR] [--json]

The dump is a real one of testdata/ (default the HF Mixtral step, 10 graphs) repeated until it
holds `--mb` MB, written to a temporary directory. Each side runs in a process of its own,
whose peak RSS (ru_maxrss, C++ allocations included) comes from wait4:

- convert: `python -m shardy_convert convert BIG -o OUT` (the command as users run it);
- floor:   what converting a graph at a time cannot do without: read the dump graph by graph
           (formats/source.py) and parse + verify + print each graph with jaxlib, writing the
           text to OUT. Its peak is the interpreter, jaxlib and the largest graph.

convert reading the file whole would peak at several times the file's size; reading it a graph
at a time keeps it near the floor, whatever the file's size (run.py's target: <= 2x).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
SOURCE = ROOT / "testdata" / "torch_xla" / "hf_mixtral_moe.dump"

FLOOR = """
import sys
sys.path.insert(0, sys.argv[3])
from floor import floor_context
from jaxlib.mlir import ir
from shardy_convert.formats import dump
from shardy_convert.formats.source import Source
from shardy_convert.ir.legacy_i1 import unpack_i1_hex

with open(sys.argv[2], "w") as out:
    for piece in Source(sys.argv[1]).pieces():
        if not isinstance(piece, dump.Graph):
            out.write(piece)
            continue
        with floor_context() as ctx:
            mod = ir.Module.parse(unpack_i1_hex(piece.text), context=ctx)
            mod.operation.verify()
            out.write(mod.operation.get_asm(enable_debug_info=False))
"""


def make_big_dump(path: Path, mb: float, source: Path = SOURCE) -> int:
    """`source` repeated until `path` holds `mb` MB; returns its graph count."""
    text = source.read_text()
    copies = max(1, round(mb * 1e6 / len(text.encode())))
    with open(path, "w") as f:
        for _ in range(copies):
            f.write(text)
    return copies * text.count("## BEGIN_GRAPH")


def run_measured(cmd: list[str]) -> dict:
    """Wall time, peak RSS (MB) and exit code of `cmd`, a process of its own."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        child = subprocess.Popen(cmd, stdout=devnull, stderr=subprocess.PIPE, env=env)
        err = child.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall_s": time.perf_counter() - start,
        "peak_mb": usage.ru_maxrss / 1024,  # KB on Linux
        "rc": child.returncode,
        "stderr": err.strip().splitlines()[-1:] if child.returncode else [],
    }


def measure(mb: float, source: Path = SOURCE, keep: Path | None = None) -> dict:
    """Makes the dump, runs the floor and convert on it; their figures."""
    with tempfile.TemporaryDirectory(prefix="big_dump_") as tmp:
        folder = keep or Path(tmp)
        big = folder / "big.dump"
        graphs = make_big_dump(big, mb, source)
        size = big.stat().st_size
        floor = run_measured(
            [sys.executable, "-c", FLOOR, str(big), str(folder / "floor.out"), str(BENCH)]
        )
        convert = run_measured(
            [sys.executable, "-m", "shardy_convert", "convert", str(big), "-o", str(folder / "out")]
        )
    return {
        "mb": size / 1e6,
        "graphs": graphs,
        "source": source.name,
        "floor": floor,
        "convert": convert,
    }


def line(r: dict) -> str:
    """The "big dump" line of `make bench`."""
    fl, cv = r["floor"], r["convert"]
    head = f"big dump ({r['mb']:.0f} MB, {r['graphs']:,} graphs: {r['source']} repeated)"
    if fl["rc"] or cv["rc"]:
        return (
            f"{head}: not measured (floor exit {fl['rc']}, convert exit {cv['rc']}: "
            f"{(cv['stderr'] or fl['stderr'] or ['?'])[0][:160]})"
        )
    return (
        f"{head}: convert {cv['wall_s']:.1f} s, peak RSS {cv['peak_mb']:.0f} MB; floor (parse + "
        f"verify + print graph by graph) {fl['wall_s']:.1f} s, peak {fl['peak_mb']:.0f} MB: "
        f"{cv['wall_s'] / fl['wall_s']:.2f}x the time, {cv['peak_mb'] / fl['peak_mb']:.2f}x "
        "the peak"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=300.0, help="the dump's size (default 300)")
    ap.add_argument("--source", type=Path, default=SOURCE, help="the dump to repeat")
    ap.add_argument("--keep", type=Path, help="make the dump (and outputs) here, and keep them")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = ap.parse_args(argv)
    r = measure(args.mb, args.source, args.keep)
    print(line(r))
    if args.json:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
