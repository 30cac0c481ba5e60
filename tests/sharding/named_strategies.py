"""Hypothesis strategies for valid named (V3) sharding strings, and a brute-force placement.

A string is built the way a valid one must be: each mesh axis is cut into pieces (a chain of
sub-axes `(1)a, (a)b, (ab)c, ...`), each piece goes to a tensor dim, to `replicated=`,
`unreduced=`, `manual=` or nowhere; neighbouring pieces of one axis in one place are merged (XLA
refuses `'x':(1)2, 'x':(2)2`), a whole axis is written as the axis, and the three lists are in
mesh order. So every string is one XLA's parser reads without aborting.

`device_tiles(text)` places data the slow, obvious way (per device, the tile index of each dim
and of each subgroup), independent of `sharding.named.placement`.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

NAMES = ("data", "model", "x", "y", "z", "mesh_idx_0", "_axis_1", "a b", "seq")
SIZES = (1, 2, 2, 2, 3, 4, 4, 6, 8)
REDUCTIONS = ("", "sum", "max", "min")


@st.composite
def chains(draw, size: int) -> list[int]:
    """An ordered factorization of `size` into factors > 1: 8 -> [2, 4], [8], [2, 2, 2]."""
    out, left = [], size
    while left > 1:
        f = draw(st.sampled_from([d for d in range(2, left + 1) if left % d == 0]))
        out.append(f)
        left //= f
    return out


def ref_text(name: str, pre: int, size: int, axis: int) -> str:
    return f"'{name}'" if size == axis else f"'{name}':({pre}){size}"


def _merged(refs: list[tuple[str, int, int]], sizes: dict[str, int]) -> list[str]:
    """(axis, pre, size) pieces in order, neighbours of one axis in a row joined."""
    out: list[list] = []
    for name, pre, size in refs:
        if out and out[-1][0] == name and out[-1][1] * out[-1][2] == pre:
            out[-1][2] *= size
        else:
            out.append([name, pre, size])
    return [ref_text(n, p, s, sizes[n]) for n, p, s in out]


@st.composite
def meshes(draw, max_devices: int = 64) -> list[tuple[str, int]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    axes, total = [], 1
    for name in names:
        size = draw(st.sampled_from([s for s in SIZES if total * s <= max_devices]))
        axes.append((name, size))
        total *= size
    return axes


@st.composite
def device_ids(draw, n: int) -> str:
    """`, device_ids=(...)` (a non-identity permutation), `, device_ids=([R]T(P))`, or ""."""
    style = draw(st.sampled_from(("none", "none", "list", "iota")))
    if style == "list" and n > 1:
        ids = draw(st.permutations(range(n)))
        if list(ids) != list(range(n)):
            return ", device_ids=(" + ",".join(map(str, ids)) + ")"
    if style == "iota" and n > 1:
        reshape = draw(chains(n))
        if len(reshape) > 1:
            perm = draw(st.permutations(range(len(reshape))))
            return f", device_ids=([{','.join(map(str, reshape))}]T({','.join(map(str, perm))}))"
    return ""


@st.composite
def named_texts(draw, reductions: bool = True, single_device_words=("maximal_mesh",)) -> str:
    """One valid V3 leaf (no tuple)."""
    form = draw(st.sampled_from(("dims",) * 8 + ("keyword", "single")))
    if form == "single":
        word = draw(st.sampled_from(single_device_words))
        return f"{{{word}[device_id={draw(st.integers(0, 15))}]}}"
    axes = draw(meshes())
    sizes = dict(axes)
    n = math.prod(sizes.values())
    head = "mesh[" + ",".join(f"'{a}'={s}" for a, s in axes) + "]" + draw(device_ids(n))
    if form == "keyword":
        return (
            "{" + head + ", " + draw(st.sampled_from(("replicated", "manual", "unreduced"))) + "}"
        )
    rank = draw(st.integers(0, 3))
    places = [f"dim{k}" for k in range(rank)] + ["replicated", "unreduced", "manual", "none"]
    by_place: dict[str, list] = {p: [] for p in places}
    for name, size in axes:
        pre = 1
        for piece in draw(chains(size)):
            by_place[draw(st.sampled_from(places))].append((name, pre, piece))
            pre *= piece
    dims = []
    for k in range(rank):
        pieces = draw(st.permutations(by_place[f"dim{k}"]))
        inner = _merged(list(pieces), sizes)
        if draw(st.booleans()) and draw(st.booleans()):
            inner.append("?")
        dims.append("{" + ", ".join(inner) + "}")
    text = "{" + head + ", [" + ", ".join(dims) + "]"
    for place in ("replicated", "unreduced", "manual"):
        refs = _merged(by_place[place], sizes)  # already in mesh order
        if refs or draw(st.integers(0, 9)) == 0:
            op = draw(st.sampled_from(REDUCTIONS)) if place == "unreduced" and reductions else ""
            text += f", {place}={op}{{{', '.join(refs)}}}"
    return text + "}"


# --- the obvious placement ---------------------------------------------------------------------


def _index(coords: list[int], ref, mesh) -> tuple[int, int]:
    """(index, size) at a mesh position of one axis `ref` or sub-axis `(pre)size` of it."""
    k = mesh.index(ref.name)
    c, n = coords[k], mesh.axes[k][1]
    if ref.pre is None:
        return c, n
    return (c // (n // (ref.pre * ref.size))) % ref.size, ref.size


def device_tiles(named) -> dict[int, tuple[int, ...]]:
    """{device: (its tile index along each dim, its manual index, its unreduced index)},
    computed position by position from the V3 definition: a dim's index is its axes' indices
    combined major first; device `order[p]` sits at mesh position p."""
    mesh = named.mesh
    shape = [s for _, s in mesh.axes]
    order = mesh.order
    groups = [d.axes for d in named.dims] + [named.manual, named.unreduced]
    out = {}
    for p in range(math.prod(shape)):
        coords = [int(c) for c in np.unravel_index(p, shape)] if shape else []
        key = []
        for refs in groups:
            idx = 0
            for ref in refs:
                i, size = _index(coords, ref, mesh)
                idx = idx * size + i
            key.append(idx)
        out[order[p] if order else p] = tuple(key)
    return out


def grid_tiles(s, rank: int, n: int) -> dict[int, tuple[int, ...]]:
    """The same map read off a V1/V2 HloSharding's device grid (collapsed kinds: all zeros)."""
    from shardy_convert.sharding import Kind, SubgroupType

    if s.kind is not Kind.TILED:
        return {d: (0,) * (rank + 2) for d in range(n)}
    grid = s.tiles.array()
    out = {}
    for coords in np.ndindex(*grid.shape):
        sub = dict(zip(s.subgroups, coords[rank:]))
        key = (*coords[:rank], sub.get(SubgroupType.MANUAL, 0), sub.get(SubgroupType.UNREDUCED, 0))
        out[int(grid[coords])] = tuple(int(c) for c in key)
    return out
