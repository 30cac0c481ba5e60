"""Shared test set-up: 16 virtual CPU devices for the compile checks, and the test data."""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

import pytest

# Before anything imports jax: the CPU client reads this once, when it starts.
_flags = re.sub(r"--xla_force_host_platform_device_count=\d+", "", os.environ.get("XLA_FLAGS", ""))
os.environ["XLA_FLAGS"] = f"{_flags} --xla_force_host_platform_device_count=16".strip()
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

ROOT = Path(__file__).resolve().parent.parent  # the repository
TESTDATA = ROOT / "testdata"
REAL_KINDS = ("torch_xla_dump", "torch_xla_mlir", "jax_gspmd")  # the inputs users bring


def manifest() -> list[dict]:
    data = json.loads((TESTDATA / "manifest.json").read_text())
    return data if isinstance(data, list) else data["entries"]


def graphs_of(text: str) -> list[str]:
    """The graphs of a torch_xla dump, or the one module `text` is."""
    from shardy_convert.formats import dump

    return [g.text for g in dump.graphs(text)] if dump.is_dump(text) else [text]


@functools.cache
def _real_graphs() -> tuple[tuple[dict, int, str], ...]:
    found = []
    for entry in manifest():
        if entry["kind"] in REAL_KINDS:
            text = (TESTDATA / entry["path"]).read_text()
            found += [(entry, k, graph) for k, graph in enumerate(graphs_of(text))]
    return tuple(found)


def real_graphs(*, ok: bool = False) -> list[tuple[dict, int, str]]:
    """(manifest entry, graph index, graph text) of every graph of testdata/'s real inputs:
    torch_xla dumps and modules, JAX's GSPMD lowerings; with `ok`, only those the manifest
    expects to convert. Read once a session (several modules parametrize over them)."""
    return [g for g in _real_graphs() if g[0]["expect"] == "ok" or not ok]


def real_graph(path: str, index: int = 0) -> tuple[dict, str]:
    """(manifest entry, graph text) of graph `index` of testdata/PATH."""
    found = [(e, g) for e, k, g in _real_graphs() if e["path"] == path and k == index]
    assert found, f"no graph {index} of testdata/{path} in the manifest"
    return found[0]


@pytest.fixture(scope="session")
def compiled_testdata():
    """`pair(graph, n)`: (converted, GSPMD program, Shardy program) of a graph of testdata/,
    converted and compiled on n CPU devices once a session: test_convert_testdata's verdicts
    and test_check_cost's cost checks share the compiles (the slowest part of the suite)."""
    from shardy_convert import convert
    from shardy_convert.commands.check import compile_module

    cache: dict = {}

    def pair(graph: str, n: int):
        if (graph, n) not in cache:
            converted = convert(graph, num_devices=n, validate=True)
            gspmd = compile_module(graph, n, shardy=False)
            cache[graph, n] = (converted, gspmd, compile_module(converted, n, shardy=True))
        return cache[graph, n]

    return pair
