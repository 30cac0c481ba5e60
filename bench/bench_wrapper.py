#!/usr/bin/env python3
"""The plugin wrapper's hook cost next to the plugin's own compile time of the same graph.

    .venv/bin/python bench/bench_wrapper.py FILE [--graph N] [--runs K]

FILE is a module or a torch_xla dump (graph N, default the largest). The graph arrives as
torch_xla hands it to a plugin: a StableHLO portable artifact (1.13.0) with a
CompileOptionsProto asking for its partitions. Measured in this process:
- first: the first `on_compile` (imports of the converter included, as `use_plugin` pays them
  up front);
- hook: one distinct program, best of K (a fresh session each time: no cache hit);
- hit: a cache hit;
- compile: xla-cpu-pjrt compiling the converted program (PJRT_Client_Compile), once.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _graph(path: Path, index: int | None) -> tuple[str, str]:
    from shardy_convert import dump

    text = path.read_text()
    graphs = dump.graphs(text) if "## BEGIN_GRAPH" in text else None
    if not graphs:
        return text, path.name
    if index is None:
        index = max(range(len(graphs)), key=lambda i: len(graphs[i].text))
    return graphs[index].text, f"{path.name}:graph {index}"


def _options(n: int) -> bytes:
    from shardy_convert import compile_options

    build = (
        compile_options._field(4, 1)
        + compile_options._field(5, n)
        + compile_options._field(6, 1)
        + compile_options._field(9, compile_options.encode_device_assignment(list(range(n))))
    )
    return compile_options._field(3, build)


def _devices(converted_text: str) -> int:
    mesh = re.search(r"sdy\.mesh @mesh = <\[([^\]]*)\]", converted_text)
    sizes = [int(s) for s in re.findall(r"=(\d+)", mesh.group(1))] if mesh else [1]
    n = 1
    for s in sizes:
        n *= s
    return n


def measure(path: Path, index: int | None, runs: int) -> dict:
    text, name = _graph(path, index)
    start = time.perf_counter()
    from shardy_convert import convert, wrapper
    from shardy_convert.legacy_i1 import unpack_i1_hex
    from tests import pjrt_plugin  # the test harness's PJRT client (pypjrt)

    n = _devices(convert(text))
    # torch_xla's own serializer writes i1 constants jaxlib's text parser cannot read.
    program = pjrt_plugin.portable_artifact(unpack_i1_hex(text), "1.13.0")
    options = _options(n)
    imports = time.perf_counter() - start
    start = time.perf_counter()
    answer = wrapper.Session().compile(program, b"mlir", options)
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(runs):
        session = wrapper.Session()
        start = time.perf_counter()
        session.compile(program, b"mlir", options)
        best = min(best, time.perf_counter() - start)
    start = time.perf_counter()
    session.compile(program, b"mlir", options)
    hit = time.perf_counter() - start
    client = pjrt_plugin.get_client(n)
    start = time.perf_counter()
    client.compile(answer[0], n, shardy=True)
    compile_s = time.perf_counter() - start
    return {
        "graph": name,
        "bytes": len(program),
        "devices": n,
        "imports_ms": imports * 1e3,
        "first_ms": first * 1e3,
        "hook_ms": best * 1e3,
        "hit_ms": hit * 1e3,
        "compile_ms": compile_s * 1e3,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", type=Path)
    ap.add_argument("--graph", type=int)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.file, args.graph, args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
