"""Benchmark of the sharding algebra (`make bench`): prints figures, asserts nothing timed.

1. V1 -> V2 on a 65,536-device list (a transposed 4-D iota printed as `{devices=[256,256]...}`)
   against the 20 ms target: parse, `to_v2()`, and both, best and median of several runs.
2. Parse throughput of torch_xla-style strings (V1 lists of 8-256 devices, with and without
   `last_tile_dim_replicate`, computed the way torch_xla 2.9 computes them) next to jaxlib's
   `HloSharding.from_string` (XLA's C++ parser) on the same strings, in one run.
"""

from __future__ import annotations

import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shardy_convert.sharding import parse
from shardy_convert.sharding.iota import iota_array

TARGET_MS = 20.0
parse_uncached = parse.__wrapped__  # the lru_cache would turn repeats into dictionary lookups


def v1_to_v2_figures(runs: int = 15) -> None:
    reshape, perm = (16, 16, 16, 16), (3, 1, 0, 2)
    ids = iota_array((65536,), reshape, perm)
    text = "{devices=[256,256]" + ",".join(map(str, ids)) + "}"
    parse_ms, v2_ms = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        sharding = parse_uncached(text)
        t1 = time.perf_counter()
        v2 = sharding.to_v2()
        t2 = time.perf_counter()
        parse_ms.append((t1 - t0) * 1e3)
        v2_ms.append((t2 - t1) * 1e3)
    assert np.array_equal(v2.tiles.array().ravel(), ids), "V2 does not rebuild the list"
    total = [a + b for a, b in zip(parse_ms, v2_ms)]
    print(f"V1 -> V2, 65,536 devices ({len(text) / 1e3:.0f} kB of text) -> {v2}")
    for name, ms in (("to_v2()", v2_ms), ("parse()", parse_ms), ("parse + to_v2", total)):
        verdict = "ok" if min(ms) <= TARGET_MS else "OVER"
        print(
            f"  {name:<14} best {min(ms):6.2f} ms   median {statistics.median(ms):6.2f} ms"
            f"   target {TARGET_MS:.0f} ms: {verdict}"
        )


def torch_xla_string(mesh_shape, spec) -> str:
    """What torch_xla 2.9 prints for `mark_sharding(t, Mesh(arange, mesh_shape), spec)`."""
    tiled = [s for s in spec if s is not None]
    order = [a for s in tiled for a in (s if isinstance(s, tuple) else (s,))]
    missing = sorted(set(range(len(mesh_shape))) - set(order))
    tiles = np.arange(np.prod(mesh_shape)).reshape(mesh_shape).transpose(order + missing)
    for i, s in enumerate(tiled):
        if isinstance(s, tuple):
            tiles = tiles.reshape((*tiles.shape[:i], -1, *tiles.shape[i + len(s) :]))
    if None not in spec and tiles.ndim == len(spec):
        return _v1(tiles.shape, tiles.ravel(), "")
    groups = np.sort(tiles.reshape(-1, int(np.prod(tiles.shape[len(tiled) :]))), axis=1)
    dims = [1 if s is None else tiles.shape[tiled.index(s)] for s in spec]
    if groups.shape[1] == 1:
        return _v1(dims, groups.ravel(), "")
    return _v1((*dims, groups.shape[1]), groups.ravel(), " last_tile_dim_replicate")


def _v1(dims, ids, suffix) -> str:
    return "{devices=[" + ",".join(map(str, dims)) + "]" + ",".join(map(str, ids)) + suffix + "}"


def torch_xla_corpus() -> list[str]:
    strings = set()
    for mesh_shape in [
        (8,),
        (2, 4),
        (4, 2),
        (2, 2, 2),
        (4, 4),
        (2, 8),
        (4, 8),
        (8, 8),
        (2, 4, 8),
        (16, 16),
        (4, 8, 8),
        (2, 2, 4, 4),
    ]:
        axes = list(range(len(mesh_shape)))
        for rank in (1, 2, 3):
            for spec in itertools.product([None, *axes], repeat=rank):
                used = [a for a in spec if a is not None]
                if used and len(used) == len(set(used)):
                    strings.add(torch_xla_string(mesh_shape, spec))
    return sorted(strings, key=lambda s: (len(s), s))


def throughput(fn, strings, min_seconds: float = 1.0) -> float:
    count, start = 0, time.perf_counter()
    while True:
        for s in strings:
            fn(s)
        count += len(strings)
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return count / elapsed


def parse_figures() -> None:
    from jax._src.lib import xla_client  # XLA's own parser, the floor to compare with

    strings = torch_xla_corpus()
    partial = sum("last_tile_dim_replicate" in s for s in strings)
    for s in strings:
        theirs = str(xla_client.HloSharding.from_string(s))
        assert str(parse_uncached(s)) == theirs, s
    ours = throughput(parse_uncached, strings)
    xla = throughput(xla_client.HloSharding.from_string, strings)
    cached = throughput(parse, strings)
    sizes = sorted({len(parse(s).tiles.devices) for s in strings})
    print(
        f"parse throughput, {len(strings)} distinct torch_xla strings ({sizes[0]}-{sizes[-1]}"
        f" devices, {partial} with last_tile_dim_replicate):"
    )
    print(f"  shardy_convert parse()       {ours:10,.0f} strings/s")
    print(f"  jaxlib HloSharding.from_string {xla:8,.0f} strings/s")
    print(f"  ratio (ours / jaxlib)        {ours / xla:10.2f}")
    print(f"  parse() with its cache warm  {cached:10,.0f} strings/s")


if __name__ == "__main__":
    v1_to_v2_figures()
    parse_figures()
