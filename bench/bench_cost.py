#!/usr/bin/env python3
"""`make bench`, program cost: what each partitioner compiles for real-size models, and what
`match_gspmd_boundary` costs per program.

    .venv/bin/python bench/bench_cost.py bench/out/cost_llama.mlir ... [--devices 8] [--json]

Each input (bench/make_inputs.py: one training step of HF Llama 2048 wide, HF GPT-2 1024 wide,
torchvision ResNet-18 224x224 batch 32, lowered by torch_xla and never run) is compiled, never
run, on jaxlib's CPU client with 8 devices, in a process of its own:
  GSPMD     the original, with torch_xla's compile options (propagation to the outputs on)
  Shardy    convert(original), the Shardy partitioner
  matched   convert(original, match_gspmd_boundary=True), the Shardy partitioner
  pinned    convert(original, match_gspmd_propagation=True): GSPMD's decisions pinned where
            Shardy's propagation departs from them, the Shardy partitioner
Costs come from check's cost report (`commands/check/cost.py`: collectives and their result
bytes in the optimized HLO, XLA's memory stats, cost-analysis FLOPs, XLA's involuntary
rematerialization warnings); outputs whose compiled sharding differs from GSPMD's are counted.
The price of matching is the extra GSPMD compile (`match s`), set against the Shardy compile
of the same program. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _compile(text, n: int, *, shardy: bool):
    """The compiled program (xla/'s: its XLA fd-2 log and seconds with it), with torch_xla's
    propagation flags."""
    from shardy_convert.ir.legacy_i1 import i1_hex_for_parser
    from shardy_convert.xla.compiler import compile_program
    from shardy_convert.xla.options import compile_options

    return compile_program(i1_hex_for_parser(text), n, compile_options(n, shardy=shardy))


def _outputs(exe) -> list[str]:
    return [str(s) for s in exe.outputs or []]


def _cost(exe) -> dict:
    from shardy_convert.commands.check.cost import program_cost
    from shardy_convert.commands.check.render_json import cost_json

    # check --format json's cost fields, and the compile time
    return {**cost_json(program_cost(exe, exe.log)), "compile_s": exe.seconds}


def measure(path: str, n: int) -> dict:
    """One input's three programs (runs in a child process: see main)."""
    import warnings

    from shardy_convert import convert
    from shardy_convert.formats import boundary_cache
    from shardy_convert.sharding import parse

    text = Path(path).read_text()
    out = {"input": Path(path).name, "bytes": len(text.encode()), "devices": n}
    exe = _compile(text, n, shardy=False)
    out["gspmd"], reference = _cost(exe), _outputs(exe)
    del exe
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        plain = convert(text)
        out["convert_s"] = time.perf_counter() - start
        start = time.perf_counter()
        matched = convert(text, match_gspmd_boundary=True)
        out["convert_matched_s"] = time.perf_counter() - start
        start = time.perf_counter()
        pinned = convert(text, match_gspmd_propagation=True)
        out["convert_pinned_s"] = time.perf_counter() - start
    out["warnings"] = [str(w.message) for w in caught]
    # The extra GSPMD compile convert() made (jaxlib's own client, LLVM at -O0): its cache holds
    # the figure; a cache hit would cost nothing.
    out["match_s"] = max(b.seconds for b in boundary_cache._cache.values())
    out["pins"] = pinned.count("sdy.sharding_constraint") - plain.count("sdy.sharding_constraint")
    for name, module in (("shardy", plain), ("matched", matched), ("pinned", pinned)):
        exe = _compile(module, n, shardy=True)
        out[name] = _cost(exe)
        outputs = _outputs(exe)
        out[name]["outputs_unlike_gspmd"] = sum(
            parse(a) != parse(b) for a, b in zip(outputs, reference)
        )
        del exe
    out["outputs"] = len(reference)
    return out


def _ratio(a, b) -> str:
    if a is None or b is None:
        return "n/a"
    return "=" if a == b else (f"{a / b:.2f}x" if b else "inf")


def _mb(x) -> str:
    return "n/a" if x is None else f"{x / 1e6:.1f}"


def report(rows: list[dict]) -> None:
    print(
        f"\n{'program':<20}{'compiled by':<12}{'coll.':>6}{'coll. MB':>10}{'temp MB':>9}"
        f"{'GFLOP':>8}{'remat':>6}{'outs != GSPMD':>14}{'bytes':>8}{'temp':>7}{'compile s':>10}"
    )
    for r in rows:
        if "error" in r:
            print(f"{r['input']:<20}{r['error']}")
            continue
        g = r["gspmd"]
        for name in ("gspmd", "shardy", "matched", "pinned"):
            c = r[name]
            differ = "" if name == "gspmd" else f"{c['outputs_unlike_gspmd']} of {r['outputs']}"
            flops = "n/a" if c["flops"] is None else f"{c['flops'] / 1e9:.1f}"
            remat = "n/a" if c["rematerializations"] is None else str(c["rematerializations"])
            label = {
                "gspmd": "GSPMD",
                "shardy": "Shardy",
                "matched": "Shardy+match",
                "pinned": "Shardy+pins",
            }[name]
            print(
                f"{(r['input'] if name == 'gspmd' else ''):<20}{label:<12}{c['collectives']:>6}"
                f"{_mb(c['collective_bytes']):>10}{_mb(c['temp_bytes']):>9}{flops:>8}{remat:>6}"
                f"{differ:>14}{_ratio(c['collective_bytes'], g['collective_bytes']):>8}"
                f"{_ratio(c['temp_bytes'], g['temp_bytes']):>7}{c['compile_s']:>10.1f}"
            )
    print(
        "  (one device's program; coll. MB = the result bytes of every collective; ratios "
        "against GSPMD's program; compiled, never run, 8 CPU devices)"
    )
    print("match_gspmd_boundary's price per distinct program (the extra GSPMD compile):")
    for r in rows:
        if "error" in r:
            continue
        shardy = r["shardy"]["compile_s"]
        share = r["match_s"] / shardy
        print(
            f"  {r['input']:<20} {r['match_s']:6.1f} s GSPMD compile at LLVM -O0 (convert "
            f"{r['convert_s'] * 1e3:.0f} ms -> {r['convert_matched_s']:.1f} s), next to "
            f"{shardy:.1f} s for the Shardy program's own compile here (+{share:.0%})"
        )
        print(
            f"  {'':<20} match_gspmd_propagation: {r['pins']} pins, convert "
            f"{r['convert_pinned_s']:.1f} s (a GSPMD compile and a Shardy compile per round)"
        )
        for w in r["warnings"]:
            print(f"    warning: {w}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--devices", type=int, default=8)
    ap.add_argument("--json", action="store_true", help="one JSON line of all rows")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.inputs[0], args.devices)))
        return 0
    rows = []
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="1")  # keep XLA's warnings (rematerialization)
    for path in args.inputs:
        if not Path(path).exists():
            rows.append({"input": Path(path).name, "error": "missing (bench/make_inputs.py)"})
            continue
        start = time.perf_counter()
        command = [sys.executable, __file__, path, "--devices", str(args.devices), "--child"]
        p = subprocess.run(command, capture_output=True, text=True, env=env)
        try:
            row = json.loads(p.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            last = (p.stderr.strip().splitlines() or ["?"])[-1]
            row = {"input": Path(path).name, "error": f"failed: {last[:200]}"}
        row["wall_s"] = time.perf_counter() - start
        rows.append(row)
    if args.json:
        print(json.dumps(rows))
    else:
        report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
