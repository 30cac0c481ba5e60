"""The comparison of shardy_convert.testing's golden files (commands/golden.py): `diff`'s, on
real torch_xla inputs from testdata/, a respelled placement equal, a moved tile located."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardy_convert.commands.golden import compare, report_lines
from shardy_convert.errors import UsageError

TESTDATA = Path(__file__).resolve().parents[2] / "testdata" / "torch_xla"
MATMUL = (TESTDATA / "matmul_2x4.mlir").read_text()
ARG2 = '%arg2: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]0,4,1,5,2,6,3,7}"}'
DUMP = (TESTDATA / "tp_mlp_train.dump").read_text()
# Graph 1's first sharding custom call (line 146 of the dump); the V1 string is on it alone.
DUMP_LINE = 146
ROWS = "{devices=[4,1,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"


def matmul_arg2(sharding: str) -> str:
    assert MATMUL.count(ARG2) == 1
    return MATMUL.replace(ARG2, ARG2.replace("{devices=[4,2]0,4,1,5,2,6,3,7}", sharding))


def dump_line(sharding: str) -> str:
    lines = DUMP.split("\n")
    assert lines[DUMP_LINE - 1].count(ROWS) == 1
    lines[DUMP_LINE - 1] = lines[DUMP_LINE - 1].replace(ROWS, sharding)
    return "\n".join(lines)


@pytest.mark.parametrize(
    "received",
    [
        pytest.param(MATMUL, id="the-same-text"),
        pytest.param(matmul_arg2("{devices=[4,2]<=[2,4]T(1,0)}"), id="v1-respelled-as-v2"),
    ],
)
def test_a_respelled_placement_is_equal(received):
    result = compare(MATMUL, received)
    assert result.equal, report_lines(result)
    assert result.placements > 0


def test_the_shardy_conversion_equals_its_gspmd_golden():
    from shardy_convert import convert

    shardy = convert(MATMUL)
    assert "mhlo.sharding" not in shardy
    assert "sdy.sharding" in shardy
    assert compare(MATMUL, shardy).equal


def test_a_moved_tile_is_located_in_the_golden_file():
    received = matmul_arg2("{devices=[4,2]0,4,1,5,2,6,7,3}")  # devices 3 and 7 swapped
    result = compare(MATMUL, received, ("golden.mlir", "received"))
    lines = report_lines(result)
    assert not result.equal
    assert any(
        line.startswith("golden.mlir:2:221: arg 2 of @main: ")
        and "devices differ at 2 of 8 tiles: tile [3,0] on 3 vs 7, tile [3,1] on 7 vs 3" in line
        for line in lines
    ), lines
    assert lines[-1] == "DIFFERENT: 1 difference"


def test_a_dump_is_compared_graph_by_graph():
    respelled = dump_line("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    assert compare(DUMP, respelled).equal
    moved = dump_line("{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}")
    lines = report_lines(compare(DUMP, moved, ("golden.mlir", "received")))
    located = [line for line in lines if line.startswith(f"golden.mlir:graph 1:{DUMP_LINE}:")]
    assert len(located) == 1, lines
    assert "devices differ at " in located[0]


def audit_report(compiled: str) -> str:
    row = {
        "name": "0.weight",
        "kind": "parameter",
        "shape": [32, 32],
        "bytes": 4096,
        "marked": ROWS,
        "compiled": compiled,
        "marked_spec": ["model", None],
        "compiled_spec": ["model", None],
    }
    return json.dumps({"tensors": [row], "findings": []})


def test_an_audit_report_is_compared_tensor_by_tensor():
    golden = audit_report(ROWS)
    assert compare(
        golden, audit_report("{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}")
    ).equal
    result = compare(
        golden, audit_report("{devices=[4,1,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}")
    )
    assert [d.what for d in result.differences] == ["0.weight: compiled"]


def test_a_report_is_not_compared_with_a_module():
    with pytest.raises(UsageError, match="golden is a sharding audit report and received is not"):
        compare(audit_report(ROWS), MATMUL)
