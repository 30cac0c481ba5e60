"""`check`'s cost report: what each partitioner compiled, measured from the executable."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from shardy_convert.commands.check import compare_programs, compile_module
from shardy_convert.commands.check.compiled import rematerializations_logged
from shardy_convert.commands.check.cost import (
    collectives,
    program_cost,
    rematerializations,
    shape_bytes,
)
from tests.conftest import TESTDATA, real_graphs

# --- counting the optimized HLO ourselves (written apart from check/cost.py) ----------------

KINDS = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
BYTES_PER_ELEMENT = {
    "pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4,
    "f32": 4, "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16,
}  # fmt: skip


def count_collectives(hlo: str) -> dict[str, tuple[int, int]]:
    """{kind: (instructions, bytes of their results)} of an HLO module's text: each line
    `[ROOT] %name = SHAPE kind(...)`, an async `kind-start` skipped for its `kind-done`. A long
    tuple shape carries comments: `(f32[], ..., /*index=5*/f32[4])`."""
    counts: dict[str, list[int]] = {}
    for line in hlo.split("\n"):
        line = re.sub(r"/\*.*?\*/", "", line)
        if " = " not in line:
            continue
        rhs = line.split(" = ", 1)[1]
        for kind in KINDS:
            hit = re.search(rf" {kind}(-done)?\(", rhs)
            if hit is not None and "=" not in rhs[: hit.start()]:
                counts.setdefault(kind, []).append(result_bytes(rhs[: hit.start()]))
    return {kind: (len(sizes), sum(sizes)) for kind, sizes in counts.items()}


def result_bytes(shape: str) -> int:
    """`(f32[2,3]{1,0}, s32[])` -> 28: layouts dropped, each array's elements times its size."""
    shape = re.sub(r"\{[^}]*\}", "", shape).replace("(", " ").replace(")", " ")
    total = 0
    for element, dims in re.findall(r"(\w+)\[([\d,]*)\]", shape):
        total += BYTES_PER_ELEMENT[element] * int(np.prod([int(d) for d in dims.split(",") if d]))
    return total


@pytest.mark.parametrize(
    ("shape", "size"),
    [
        ("f32[2,3]{1,0}", 2 * 3 * 4),
        ("(f32[], s8[4]{0})", 4 + 4),
        ("pred[]", 1),
        ("bf16[8]{0}", 16),
        ("s32[<=8]{0}", 32),
        ("((f32[2]{0}, c64[1]{0}), u4[3]{0})", 8 + 8 + 2),
        ("token[]", 0),
        ("(f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[2]{0})", 5 * 4 + 8),
    ],
    ids=[
        "array",
        "tuple",
        "pred",
        "bf16",
        "dynamic-bound",
        "nested-tuple-sub-byte",
        "token",
        "long-tuple-comments",
    ],
)
def test_shape_bytes_sums_a_tuples_elements(shape, size):
    assert shape_bytes(shape) == size


def test_an_async_pair_counts_once_with_the_done_result():
    """CPU compiles collectives synchronously; other backends split them in start/done."""
    hlo = "\n".join(
        [
            "  %ags = (f32[2]{0}, f32[16]{0}) all-gather-start(%p), dimensions={0}",
            "  %agd = f32[16]{0} all-gather-done(%ags)",
            "  ROOT %ar = (f32[], f32[]) all-reduce(%a, %b), to_apply=%add",
        ]
    )
    found = collectives(hlo)
    assert found["all-gather"].count == 1
    assert found["all-gather"].bytes == 64
    assert found["all-reduce"].bytes == 8
    assert set(found) == {"all-gather", "all-reduce"}


def test_rematerializations_are_counted_in_xlas_log(monkeypatch):
    log = "E0101 spmd_partitioner.cc] [spmd] Involuntary full rematerialization. The compiler\n"
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "1")
    assert rematerializations(log * 2) == 2
    assert rematerializations(None) is None
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")  # XLA's WARNING lines are not written
    assert rematerializations(log) is None


def test_program_cost_of_a_real_compile():
    """torch_xla's matmul on a 2x4 mesh: every measure is there on this jaxlib."""
    text = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()
    compiled = compile_module(text, 8, shardy=False)
    cost = program_cost(compiled.program, compiled.log)
    assert cost == compiled.cost
    assert cost.collectives == sum(c.count for c in cost.by_kind.values()) > 0
    assert cost.temp_bytes is not None
    assert cost.peak_bytes == cost.argument_bytes + cost.output_bytes + cost.temp_bytes
    assert cost.flops > 0
    assert cost.rematerializations == (0 if rematerializations_logged() else None)


# --- every real graph of testdata/ -----------------------------------------------------------


def _unique_graphs():
    """Real graphs with a Shardy form, each once: a dump's repeated graph (Mixtral's layers, a
    retraced step) and a module that is also a dump's graph differ only in names."""
    seen: dict[str, list] = {}
    for entry, k, graph in real_graphs():
        if entry["expect"] != "ok":
            continue
        same = re.sub(r"^module @[\w.]+", "module", graph, flags=re.M)
        key = hashlib.sha1(f"{entry['num_devices']}:{same}".encode()).hexdigest()
        seen.setdefault(key, []).append((entry, k, graph))
    return [
        pytest.param(found[0][0], found[0][2], id="+".join(f"{e['path']}:{k}" for e, k, _ in found))
        for found in seen.values()
    ]


UNIQUE = _unique_graphs()


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "graph"), UNIQUE)
def test_report_counts_what_the_optimized_hlo_holds(entry, graph, compiled_testdata):
    """The report's collectives (by kind, count and bytes), temp memory, FLOPs and
    rematerializations of both programs are what the compiled executables hold."""
    _, gspmd, shardy = compiled_testdata(graph, entry["num_devices"])
    report = compare_programs(gspmd, shardy, outputs="annotated")
    for side, compiled, cost in (("GSPMD", gspmd, report.gspmd), ("Shardy", shardy, report.shardy)):
        exe = compiled.executable
        want = count_collectives(exe.hlo_modules()[0].to_string())
        got = {kind: (c.count, c.bytes) for kind, c in cost.by_kind.items()}
        assert got == want, side
        assert cost.collectives == sum(n for n, _ in want.values()), side
        assert cost.collective_bytes == sum(b for _, b in want.values()), side
        assert cost.temp_bytes == exe.get_compiled_memory_stats().temp_size_in_bytes, side
        assert cost.flops == _flops(exe.cost_analysis()), side
        log = [line for line in compiled.log.splitlines() if "Involuntary full remat" in line]
        assert cost.rematerializations == (len(log) if rematerializations_logged() else None)


def _flops(analysis) -> float:
    if isinstance(analysis, list):
        analysis = analysis[0]
    return analysis.get("flops", 0.0)


@pytest.mark.slow
@pytest.mark.parametrize(("entry", "graph"), UNIQUE)
def test_boundary_differences_are_the_compiled_shardings_that_differ(
    entry, graph, compiled_testdata
):
    """Every parameter and output whose compiled sharding differs, and no other."""
    from jax._src.lib import xla_client as xc

    _, gspmd, shardy = compiled_testdata(graph, entry["num_devices"])
    report = compare_programs(gspmd, shardy, outputs="annotated")
    want = set()
    for kind, shardings in (
        ("parameter", (e.get_parameter_shardings() for e in (gspmd.executable, shardy.executable))),
        ("output", (e.get_output_shardings() for e in (gspmd.executable, shardy.executable))),
    ):
        a, b = shardings
        for k, (x, y) in enumerate(zip(a or [], b or [])):
            x, y = xc.HloSharding.from_proto(x), xc.HloSharding.from_proto(y)
            if x != y and not (x.is_replicated() and y.is_replicated()):
                want.add((kind, k, repr(x), repr(y)))
    assert {(d.kind, d.index, d.gspmd, d.shardy) for d in report.boundary} == want


def test_every_real_graph_is_measured():
    """All the real graphs, and collectives in most of them: the checks above are not empty."""
    ids = "+".join(p.id for p in UNIQUE)
    for entry, k, _ in real_graphs():
        if entry["expect"] == "ok":
            assert f"{entry['path']}:{k}" in ids
    assert len(UNIQUE) >= 40
