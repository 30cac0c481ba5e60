"""One named (V3) sharding of XLA's HloSharding text, as jaxlib 0.12's `HloSharding.from_string`
reads it (`hlo_parser.cc`, the named branch of ParseSingleSharding):

    {mesh['data'=2,'model'=4], device_ids=(3,6,0,5,1,7,2,4), [{'data'}, {'model', ?}],
     replicated={...}, unreduced=max{...}, manual={...}, metadata={...}}
    {mesh['x'=8], device_ids=([2,4]T(1,0)), replicated}      (also `manual`, `unreduced`)
    {maximal_mesh[device_id=3]}    {single_device[device_id=3]}

XLA verifies most of the rules with a CHECK that aborts the process (overlapping or unsorted
axes, a device list that is no permutation, a sub-axis that does not split its axis); here each
is a ShardingSyntaxError or ShardingValueError at the column of the offending part.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ShardyConvertError
from ...options import MAX_DEVICES
from ..iota import is_permutation
from ..model import HloSharding
from ..named import (
    REDUCTIONS,
    NamedMesh,
    NamedSharding,
    axis_text,
    check_axis,
    mergeable,
    mesh_order,
    mesh_with_iota,
    overlap,
    placement,
    quote,
)
from ..sdy import AxisRef, DimSharding
from .lexer import Cursor, int_list
from .metadata import metadata
from .tile_assignment import check_device_list

_KEYWORDS = ("replicated", "manual", "unreduced")
_LISTS = ("replicated", "unreduced", "manual")


def single(cur: Cursor, word: str) -> HloSharding:
    """`{` and `word` (mesh, maximal_mesh or single_device) read: the rest up to `}`."""
    start = cur.pos - len(word)
    if word != "mesh":
        named, md = _single_device(cur, word)
    else:
        named, md = _on_mesh(cur)
    try:
        s = placement(named)
    except ShardyConvertError as e:  # a mesh too big to list device by device
        raise cur.value_error(e.message, start) from None
    reduction = named.reduction if named.reduction != "sum" else None
    return HloSharding(
        s.kind, s.tiles, s.subgroups, s.device, metadata=md, named=named, reduction=reduction
    )


def _single_device(cur: Cursor, word: str) -> tuple[NamedSharding, str | None]:
    cur.expect("[", f"'[' after '{word}'")
    if not _attribute_name(cur, ("device_id",)):
        raise cur.error(f"expected 'device_id=' in {word}[...]")
    pos = cur.skip()
    device = cur.integer("a device id")
    if device < 0:
        raise cur.value_error(f"device id {device} is negative", pos)
    cur.expect("]", f"']' to end {word}[...]")
    md = _trailing_metadata(cur)
    return NamedSharding(None, device=device, word=word), md


def _trailing_metadata(cur: Cursor) -> str | None:
    """`, metadata={...}` (optional), then the closing `}`."""
    md = None
    if cur.eat(","):
        pos = cur.skip()
        if not _attribute_name(cur, ("metadata",)):
            raise cur.error("expected 'metadata=' or the end of the sharding", pos)
        md = metadata(cur)[0]
    cur.expect("}", "'}' to end the sharding")
    return md


def _attribute_name(cur: Cursor, names: tuple[str, ...]) -> str | None:
    """One of `names` followed right away by `=` (XLA's lexer reads `name=` as one token), both
    read; None (nothing read) otherwise."""
    pos = cur.skip()
    name = cur.word()
    if name in names and cur.text.startswith("=", cur.pos):
        cur.pos += 1
        return name
    cur.pos = pos
    return None


# --- on a mesh -------------------------------------------------------------------------------


class _Reader:
    """The state of one `{mesh[...], ...}`: the mesh, every axis reference read so far (no two
    may overlap) and the attributes seen."""

    def __init__(self, cur: Cursor, mesh: NamedMesh):
        self.cur = cur
        self.mesh = mesh
        self.used: list[AxisRef] = []
        self.seen: set[str] = set()
        self.lists: dict[str, tuple[AxisRef, ...]] = {}
        self.reduction = "sum"
        self.metadata: str | None = None

    def ref(self) -> AxisRef:
        """One axis reference, checked against the mesh and every reference before it."""
        cur = self.cur
        pos = cur.skip()
        name = cur.quoted("an axis name")
        ref = AxisRef(name)
        if cur.eat(":"):
            cur.expect("(", "'(' to start a sub-axis pre-size")
            pre = cur.integer("a sub-axis pre-size")
            cur.expect(")", "')' after a sub-axis pre-size")
            ref = AxisRef(name, pre, cur.integer("a sub-axis size"))
        problem = check_axis(ref, self.mesh)
        if problem is None:
            problem = next(
                (
                    f"{axis_text(ref)} is used twice"
                    if u == ref
                    else f"{axis_text(ref)} overlaps {axis_text(u)}, used before"
                    for u in self.used
                    if overlap(u, ref, self.mesh.sizes)
                ),
                None,
            )
        if problem is not None:
            raise cur.value_error(problem, pos)
        self.used.append(ref)
        return ref


def _on_mesh(cur: Cursor) -> tuple[NamedSharding, str | None]:
    mesh = _mesh(cur)
    reader = _Reader(cur, mesh)
    if cur.eat(",") and _attribute_name(cur, ("device_ids",)):
        mesh = reader.mesh = _device_ids(cur, mesh)
        cur.expect(",", "',' after device_ids=(...)")
    if cur.peek() != "[":
        return _keyword_form(cur, mesh)
    dims = _dims(reader)
    while cur.eat(","):
        _attribute(reader)
    cur.expect("}", "',' or '}' after the dim shardings")
    lists = reader.lists
    keyword = _as_keyword(mesh, dims, lists)
    if keyword is not None:  # one form for what XLA prints one way
        reduction = reader.reduction if keyword == "unreduced" else "sum"
        return NamedSharding(mesh, keyword=keyword, reduction=reduction), reader.metadata
    named = NamedSharding(
        mesh,
        dims,
        replicated=lists.get("replicated", ()),
        unreduced=lists.get("unreduced", ()),
        manual=lists.get("manual", ()),
        # No unreduced axes, nothing to reduce: XLA prints no reduction then, nor do we.
        reduction=reader.reduction if lists.get("unreduced") else "sum",
    )
    return named, reader.metadata


def _as_keyword(mesh: NamedMesh, dims, lists: dict) -> str | None:
    """The keyword XLA prints for a rank-0 sharding: `replicated` for `[]` alone; `manual` or
    `unreduced` when that list holds every axis of size > 1 (whole, in mesh order) and the
    other lists only size-1 axes. None for the others."""
    if dims:
        return None
    said = {name: refs for name, refs in lists.items() if refs}
    if not said:
        return "replicated"
    sizes = mesh.sizes
    wanted = tuple(AxisRef(name) for name, n in mesh.axes if n > 1)
    for keyword in ("manual", "unreduced"):
        refs = said.get(keyword, ())
        others = [r for name, rs in said.items() if name != keyword for r in rs]
        trivial = all(r.pre is None and sizes[r.name] == 1 for r in others)
        if refs and trivial and tuple(r for r in refs if sizes[r.name] > 1) == wanted:
            return keyword
    return None


def _keyword_form(cur: Cursor, mesh: NamedMesh) -> tuple[NamedSharding, str | None]:
    """`replicated`, `manual` or `unreduced[=sum|max|min]` after the mesh."""
    pos = cur.skip()
    word = cur.word()
    if word not in _KEYWORDS:
        raise cur.error(
            "expected the dim shardings '[...]', or replicated, manual or unreduced", pos
        )
    reduction = "sum"
    if word == "unreduced" and cur.text.startswith("=", cur.pos):
        cur.pos += 1
        reduction = _reduction(cur)
    return NamedSharding(mesh, keyword=word, reduction=reduction), _trailing_metadata(cur)


def _reduction(cur: Cursor) -> str:
    pos = cur.skip()
    word = cur.word() or ""
    if word not in REDUCTIONS:
        raise cur.error("expected sum, max or min after 'unreduced='", pos)
    return word


def _mesh(cur: Cursor) -> NamedMesh:
    """`['a'=2,'b'=4]` after `mesh`: unique non-empty names, sizes >= 1."""
    cur.expect("[", "'[' after 'mesh'")
    axes: list[tuple[str, int]] = []
    start = cur.skip()
    while not cur.eat("]"):
        if axes:
            cur.expect(",", "',' or ']' in the mesh axes")
        pos = cur.skip()
        name = cur.quoted("a mesh axis name")
        if not name or name in dict(axes):
            why = "is empty" if not name else "is given twice"
            raise cur.value_error(f"mesh axis name {quote(name)} {why}", pos)
        cur.expect("=", f"'=' after mesh axis {quote(name)}")
        size_pos = cur.skip()
        size = cur.integer("a mesh axis size")
        if size < 1:
            raise cur.value_error(f"mesh axis {quote(name)} has size {size}", size_pos)
        axes.append((name, size))
        if math.prod(s for _, s in axes) > MAX_DEVICES:
            raise cur.value_error(f"the mesh has more than {MAX_DEVICES} devices", start)
    return NamedMesh(tuple(axes))


def _device_ids(cur: Cursor, mesh: NamedMesh) -> NamedMesh:
    """`(3,6,0,...)` (a permutation, not the identity) or `([R]T(P))` after `device_ids=`."""
    cur.expect("(", "'(' after 'device_ids='")
    pos = cur.skip()
    if cur.eat("["):
        mesh = _device_iota(cur, mesh, pos)
    else:
        ids = int_list(cur, "device id", mesh.size)
        if len(ids) != mesh.size:
            raise cur.value_error(
                f"the mesh has {mesh.size} devices but device_ids lists {len(ids)}", pos
            )
        check_device_list(cur, (mesh.size,), np.asarray(ids, dtype=np.int64), pos)
        if ids == list(range(mesh.size)):
            raise cur.value_error(
                "device_ids lists the identity order 0, 1, 2, ...: leave device_ids out", pos
            )
        mesh = NamedMesh(mesh.axes, device_ids=tuple(ids))
    cur.expect(")", "')' to end device_ids")
    return mesh


def _device_iota(cur: Cursor, mesh: NamedMesh, pos: int) -> NamedMesh:
    reshape = int_list(cur, "iota reshape dim")
    cur.expect("]", "']' to end the iota reshape dims")
    if any(d < 1 for d in reshape) or math.prod(reshape) != mesh.size:
        raise cur.value_error(
            f"device_ids iota [{','.join(map(str, reshape))}] does not hold the mesh's "
            f"{mesh.size} devices",
            pos,
        )
    if len(reshape) == 1:
        return mesh
    t_pos = cur.skip()
    if not (cur.eat("T") and cur.eat("(")):
        raise cur.error("expected 'T(' after several iota reshape dims", t_pos)
    perm = int_list(cur, "iota transpose dim")
    cur.expect(")", "')' to end the iota transpose")
    if len(perm) != len(reshape) or not is_permutation(np.asarray(perm)):
        raise cur.value_error(
            f"T{tuple(perm)} is not a permutation of 0..{len(reshape) - 1}", t_pos
        )
    return mesh_with_iota(mesh.axes, reshape, perm)


def _dims(reader: _Reader) -> tuple[DimSharding, ...]:
    """`[{'a'}, {'b', ?}, {?}]`: each dim's axes, major first, and whether it is open."""
    cur = reader.cur
    cur.expect("[", "'[' to start the dim shardings")
    dims: list[DimSharding] = []
    while not cur.eat("]"):
        if dims:
            cur.expect(",", "',' or ']' in the dim shardings")
        cur.expect("{", "'{' to start a dim sharding")
        axes: list[AxisRef] = []
        closed = True
        while not cur.eat("}"):
            if axes or not closed:
                cur.expect(",", "',' or '}' in a dim sharding")
            if not closed:
                raise cur.error("'?' must come last in a dim sharding")
            if cur.eat("?"):
                closed = False
                continue
            pos = cur.skip()
            axes.append(reader.ref())
            if len(axes) > 1 and mergeable(axes[-2], axes[-1]):
                raise cur.value_error(_merge_message(axes[-2], axes[-1]), pos)
        dims.append(DimSharding(tuple(axes), closed))
    return tuple(dims)


def _merge_message(a: AxisRef, b: AxisRef) -> str:
    return f"{axis_text(a)}, {axis_text(b)} are one sub-axis: write them as one"


def _attribute(reader: _Reader) -> None:
    """`replicated={...}`, `unreduced=[sum|max|min]{...}`, `manual={...}` or `metadata={...}`,
    each at most once."""
    cur = reader.cur
    pos = cur.skip()
    name = _attribute_name(cur, (*_LISTS, "metadata"))
    if name is None:
        raise cur.error("expected replicated=, unreduced=, manual= or metadata=", pos)
    if name in reader.seen:
        raise cur.error(f"'{name}' is given twice", pos)
    reader.seen.add(name)
    if name == "metadata":
        reader.metadata = metadata(cur)[0]
        return
    if name == "unreduced" and cur.peek() != "{":
        reader.reduction = _reduction(cur)
    reader.lists[name] = _axis_list(reader, name)


def _axis_list(reader: _Reader, name: str) -> tuple[AxisRef, ...]:
    """`{'a', 'b':(1)2}`: in mesh order, no two that are one sub-axis."""
    cur = reader.cur
    cur.expect("{", f"'{{' to start the {name} axes")
    refs: list[AxisRef] = []
    while not cur.eat("}"):
        if refs:
            cur.expect(",", f"',' or '}}' in the {name} axes")
        pos = cur.skip()
        refs.append(reader.ref())
        if len(refs) < 2:
            continue
        a, b = refs[-2], refs[-1]
        if mesh_order(a, reader.mesh) > mesh_order(b, reader.mesh):
            raise cur.value_error(
                f"{name} axes must be in mesh order: {axis_text(b)} comes first", pos
            )
        if mergeable(a, b):
            raise cur.value_error(_merge_message(a, b), pos)
    return tuple(refs)
