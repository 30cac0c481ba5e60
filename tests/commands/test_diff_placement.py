"""`diff` compares every valid GSPMD module by the devices that hold each tile (issue 24, item
7), whether or not its shardings are views of one device mesh.

The inputs are testdata/'s real torch_xla modules and dumps, changed here: two devices of one V1
list swapped. GSPMD compiles such a list (a V1 list may name any order), but the module's
shardings are then no views of one mesh, so it has no Shardy form on one mesh; `diff` compares
the two sides as GSPMD and reports the swap as a difference (exit 1), located, naming the
tiles whose devices differ. The expected tiles are worked out here from the list's text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pytest

from shardy_convert.commands.diff import diff as compare
from shardy_convert.formats import dump

from ..conftest import TESTDATA
from ..helpers import run

TORCH_XLA = TESTDATA / "torch_xla"
MODULES = [
    "matmul_2x4.mlir",
    "matmul_2x2.mlir",
    "transformer_block.mlir",
    "hf_gpt2_2d.mlir",
    "mesh3d_partial.mlir",
    "strided16.mlir",
    "custom_device_ids_manual.mlir",
]
_ARG_LIST = re.compile(
    r'%arg(\d+): [^{]*\{mhlo\.sharding = "\{devices=\[([\d,]+)\]([\d,]+)'
    r'( last_tile_dim_replicate)?\}"'
)


@dataclass(frozen=True)
class Swap:
    """Two devices of one V1 list on a func argument swapped: the new text, which argument,
    its line, and the tiles (data-dim positions) whose devices differ, each with its devices
    before and after."""

    text: str
    arg: int
    line: int
    moved: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]]]


def swap_devices(text: str, same_group: bool = False) -> Swap:
    """`text` with two devices swapped in the first V1 list of a func argument that has more
    than one tile: those of the first and the last tile (or, `same_group`, two devices of one
    replication group, which places nothing elsewhere)."""
    for m in _ARG_LIST.finditer(text):
        dims = [int(d) for d in m.group(2).split(",")]
        devices = [int(d) for d in m.group(3).split(",")]
        group = dims[-1] if m.group(4) else 1
        tiles = math.prod(dims) // group
        if (group if same_group else tiles) < 2:
            continue
        i, j = (0, 1) if same_group else (0, len(devices) - group)
        swapped = list(devices)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        start, end = m.span(3)
        new = text[:start] + ",".join(map(str, swapped)) + text[end:]
        line = text.count("\n", 0, start) + 1
        return Swap(
            new,
            int(m.group(1)),
            line,
            _moved(dims[: len(dims) - bool(m.group(4))], devices, swapped, group),
        )
    raise AssertionError("no V1 list to swap devices in")


def _moved(data_dims, before, after, group) -> dict:
    """Each data tile (row-major over `data_dims`) whose device set changed."""
    moved = {}
    for k in range(len(before) // group):
        a = tuple(sorted(before[k * group : (k + 1) * group]))
        b = tuple(sorted(after[k * group : (k + 1) * group]))
        if a != b:
            index = tuple(int(x) for x in divmod_index(k, data_dims))
            moved[index] = (a, b)
    return moved


def divmod_index(k: int, dims: list[int]) -> tuple[int, ...]:
    """Row-major position `k` as an index over `dims`: 5 over [2, 4] is (1, 1)."""
    index = []
    for d in reversed(dims):
        k, r = divmod(k, d)
        index.append(r)
    return tuple(reversed(index))


def _tile_text(index, devices) -> str:
    ids = devices[0] if len(devices) == 1 else "{" + ",".join(map(str, devices)) + "}"
    return f"[{','.join(map(str, index))}] on {ids}"


@pytest.mark.parametrize("name", MODULES)
def test_two_devices_swapped_in_a_v1_list_is_one_located_difference(name, tmp_path):
    path = TORCH_XLA / name
    swap = swap_devices(path.read_text())
    changed = tmp_path / name
    changed.write_text(swap.text)

    result = compare(path.read_text(), swap.text, (str(path), str(changed)))
    assert len(result.differences) == 1, [str(d) for d in result.differences]
    (found,) = result.differences
    assert found.what == f"arg {swap.arg} of @main"
    assert found.location.startswith(f"{swap.line}:")
    shown = [
        f"tile {_tile_text(index, a)} vs {_tile_text(index, b).split(' on ')[1]}"
        for index, (a, b) in sorted(swap.moved.items())
    ]
    assert found.detail.startswith(f"devices differ at {len(swap.moved)} of ")
    assert all(text in found.detail for text in shown[:4]), (found.detail, shown)

    cli = run("diff", path, changed)
    assert cli.exit_code == 1, cli.output
    assert f"{path}:{found.location}: arg {swap.arg} of @main: " in cli.stdout
    assert cli.stdout.endswith("DIFFERENT: 1 difference\n")


def test_a_module_whose_shardings_share_no_mesh_is_compared_as_gspmd_saying_so():
    """matmul_2x4 with arg 3's list `0,1,2,3,4,5,6,7` made `0,2,1,3,4,5,6,7`: no one order of
    the 8 devices makes every list of the module an iota any more (the issue's case: `diff`
    exited 2, "not views of one device mesh")."""
    text = (TORCH_XLA / "matmul_2x4.mlir").read_text()
    swapped = text.replace('"{devices=[2,4]0,1,2,3,4,5,6,7}"', '"{devices=[2,4]0,2,1,3,4,5,6,7}"')
    result = compare(text, swapped, ("a.mlir", "b.mlir"))
    (note,) = result.notes
    assert note.startswith("b.mlir: no Shardy form (the shardings of this module are not views")
    assert note.endswith("compared as GSPMD, by the devices that hold each tile")
    assert [str(d) for d in result.differences] == [
        "a.mlir:2:297: arg 3 of @main: {devices=[2,4]<=[8]} vs {devices=[2,4]0,2,1,3,4,5,6,7} "
        "(B: b.mlir:2:297): devices differ at 2 of 8 tiles: tile [0,1] on 1 vs 2, "
        "tile [0,2] on 2 vs 1"
    ]


@pytest.mark.parametrize("name", ["matmul_2x4.mlir", "hf_gpt2_2d.mlir", "mesh3d_partial.mlir"])
def test_devices_swapped_inside_one_replication_group_place_nothing_elsewhere(name):
    text = (TORCH_XLA / name).read_text()
    swap = swap_devices(text, same_group=True)
    assert not swap.moved
    assert swap.text != text
    result = compare(text, swap.text)
    assert result.equal, [str(d) for d in result.differences]
    assert result.placements > 0


def test_the_same_swap_on_both_sides_is_equal():
    swap = swap_devices((TORCH_XLA / "matmul_2x4.mlir").read_text())
    result = compare(swap.text, swap.text)
    assert result.equal
    assert result.placements == 5


def test_a_swap_in_one_graph_of_a_dump_is_located_in_that_graph(tmp_path):
    path = TORCH_XLA / "tp_mlp_train.dump"
    text = path.read_text()
    between, graphs = dump.split(text)
    swap = swap_devices(graphs[1].text)
    bodies = [graphs[0].text, swap.text]
    changed = tmp_path / "changed.dump"
    changed.write_text(dump.join(between, bodies))

    cli = run("diff", path, changed)
    assert cli.exit_code == 1, cli.output
    line = graphs[1].first_line + swap.line - 1
    assert f"{path}:graph 1:{line}:" in cli.stdout
    assert f"arg {swap.arg} of @main" in cli.stdout
    assert "devices differ at" in cli.stdout
    assert cli.stdout.endswith("DIFFERENT: 1 difference\n")
