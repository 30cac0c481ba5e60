#!/usr/bin/env python3
"""`make bench`, GSPMD's program under Shardy: every real graph of testdata/ whose Shardy
program costs otherwise than GSPMD's, compiled three ways.

    .venv/bin/python bench/bench_pins.py [--json]

  GSPMD    the original, torch_xla's compile options (propagation to the outputs on)
  Shardy   convert(original)
  pinned   convert(original, match_gspmd_propagation=True): GSPMD's decisions pinned where
           Shardy's propagation departs from them (passes/match_gspmd_propagation.py)
on jaxlib's CPU client with the manifest's device count, XLA's warnings kept (the
rematerialization count). Per graph: collective bytes, temp memory, rematerializations and
compile seconds of each program, the pins written and the seconds convert took to find them,
and which program is cheaper (check's `cheaper`). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
KINDS = ("torch_xla_dump", "torch_xla_mlir", "jax_gspmd")


def measure() -> list[dict]:
    from shardy_convert import convert
    from shardy_convert.commands.check.compiled import compile_module
    from shardy_convert.commands.check.divergence import cheaper, costs_differ
    from shardy_convert.formats import dump

    rows = []
    for entry in json.loads((ROOT / "testdata" / "manifest.json").read_text()):
        if entry["kind"] not in KINDS or entry["expect"] != "ok":
            continue
        text = (ROOT / "testdata" / entry["path"]).read_text()
        graphs = dump.graphs(text) if dump.is_dump(text) else [dump.Graph(None, text)]
        n = entry["num_devices"]
        for graph in graphs:
            row = {"graph": f"{entry['path']}" + ("" if graph.index is None else f":{graph.index}")}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    gspmd = compile_module(graph.text, n, shardy=False)
                    shardy = compile_module(convert(graph.text, num_devices=n), n, shardy=True)
                    if not costs_differ(gspmd.cost, shardy.cost):
                        continue
                    start = time.perf_counter()
                    pinned_text = convert(graph.text, num_devices=n, match_gspmd_propagation=True)
                    row["pin_s"] = time.perf_counter() - start
                    pinned = compile_module(pinned_text, n, shardy=True)
                except Exception as e:  # a graph with no Shardy form: say so, go on
                    row["error"] = str(e).splitlines()[0][:160]
                    rows.append(row)
                    continue
            row["pins"] = pinned_text.count("sdy.sharding_constraint") - convert(
                graph.text, num_devices=n
            ).count("sdy.sharding_constraint")
            for name, program in (("gspmd", gspmd), ("shardy", shardy), ("pinned", pinned)):
                cost = program.cost
                row[name] = {
                    "collective_bytes": cost.collective_bytes,
                    "temp_bytes": cost.temp_bytes,
                    "remats": cost.rematerializations,
                    "compile_s": program.program.seconds,
                }
            row["cheaper"] = cheaper(gspmd.cost, shardy.cost)
            row["warnings"] = [str(w.message)[:200] for w in caught if "match" in str(w.message)]
            rows.append(row)
    return rows


def _ratio(a, b) -> str:
    if a is None or b is None:
        return "n/a"
    return "=" if a == b else (f"{a / b:.2f}x" if b else "inf")


def report(rows: list[dict]) -> None:
    print(
        f"{'graph':<36}{'program':<8}{'coll. KB':>10}{'temp KB':>10}{'remat':>6}"
        f"{'bytes':>7}{'temp':>7}{'compile s':>10}{'pins':>6}{'pin s':>7}  cheaper"
    )
    for r in rows:
        if "error" in r:
            print(f"{r['graph']:<36}{r['error']}")
            continue
        g = r["gspmd"]
        for name in ("gspmd", "shardy", "pinned"):
            c = r[name]
            pins = f"{r['pins']:>6}{r['pin_s']:>7.1f}" if name == "pinned" else " " * 13
            print(
                f"{(r['graph'] if name == 'gspmd' else ''):<36}{name:<8}"
                f"{c['collective_bytes'] / 1e3:>10.1f}{c['temp_bytes'] / 1e3:>10.1f}"
                f"{'n/a' if c['remats'] is None else c['remats']:>6}"
                f"{_ratio(c['collective_bytes'], g['collective_bytes']):>7}"
                f"{_ratio(c['temp_bytes'], g['temp_bytes']):>7}{c['compile_s']:>10.2f}{pins}"
                f"  {r['cheaper'] if name == 'shardy' else ''}"
            )
        for w in r["warnings"]:
            print(f"    warning: {w}")
    print(
        "  (one device's program; ratios against GSPMD's; compiled, never run; the pins are "
        "the constraints convert added; pin s: convert with the pass, its compiles included)"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure()))
        return 0
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")  # keep XLA's rematerialization warnings
    p = subprocess.run(
        [sys.executable, __file__, "--child"], capture_output=True, text=True, env=env
    )
    try:
        rows = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        print(f"bench_pins failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
        return 1
    print(json.dumps(rows) if args.json else "", end="")
    if not args.json:
        report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
