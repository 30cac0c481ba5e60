"""`check`'s cost report: what each partitioner compiled, measured from the executable."""

from __future__ import annotations

import pytest

from shardy_convert.commands.check import compile_module
from shardy_convert.commands.check.cost import (
    collectives,
    program_cost,
    rematerializations,
    shape_bytes,
)

from .conftest import TESTDATA


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
    ],
    ids=["array", "tuple", "pred", "bf16", "dynamic-bound", "nested-tuple-sub-byte", "token"],
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
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    assert rematerializations(log * 2) == 2
    assert rematerializations(None) is None
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")  # XLA's ERROR lines are not written
    assert rematerializations(log) is None


def test_program_cost_of_a_real_compile():
    """torch_xla's matmul on a 2x4 mesh: every measure is there on this jaxlib."""
    text = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()
    compiled = compile_module(text, 8, shardy=False)
    cost = program_cost(compiled.executable, compiled.log)
    assert cost == compiled.cost
    assert cost.collectives == sum(c.count for c in cost.by_kind.values()) > 0
    assert cost.temp_bytes is not None
    assert cost.peak_bytes == cost.argument_bytes + cost.output_bytes + cost.temp_bytes
    assert cost.flops > 0
    assert cost.rematerializations == 0
