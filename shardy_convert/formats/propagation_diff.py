"""Where two partitioners decided differently: the values of one program whose sharding after
GSPMD's propagation differs from the one after Shardy's.

Both sides are the same program compiled from a tagged module (ir/op_tags.py): every
instruction XLA made for op K of the module carries `op_name="sc.op.K"`. The instructions of
one op are matched in the order XLA printed them, the k-th of GSPMD's with the k-th of
Shardy's, and only where both have the same opcode and shape: anything else is counted as
unmatched, never guessed. Instructions XLA made on its own (no tag: a constant it split, a
copy) and parameters (the boundary, compared apart) are not compared.

Shardings are compared by placement (`sharding.normalize`): `{devices=[4,2]0,4,1,5,2,6,3,7}`
and `{devices=[4,2]<=[2,4]T(1,0)}` are one decision. An instruction propagation leaves
without a sharding is replicated (XLA's partitioner reads it so: Shardy leaves replicated
values unannotated, GSPMD what it could not decide), and a `get-tuple-element` without one has
its element of the tuple's.

A divergence *starts* where none of the instruction's operands diverges: pinning that value
to GSPMD's decision may bring the values computed from it along.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import ShardyConvertError
from ..ir.op_tags import index_of
from ..sharding import Kind, normalize, parse
from .propagated_hlo import Instruction, instructions

REPLICATED = "{replicated}"


@dataclass(frozen=True)
class Divergence:
    """Op `op` of the module (its tag's number), the `part`-th instruction of its kind XLA
    made for it (`opcode`, HLO `shape`; a `get-tuple-element`'s `index`), with GSPMD's and
    Shardy's shardings as XLA printed them; `after`: the ops of its operands that diverge too
    (none: the divergence `starts` here)."""

    op: int
    part: int
    opcode: str
    shape: str
    gspmd: str
    shardy: str
    after: tuple[int, ...] = ()
    index: int | None = None

    @property
    def starts(self) -> bool:
        return not self.after


@dataclass(frozen=True)
class Comparison:
    """The divergences in program order, how many tagged instructions were compared
    (`matched`) and which could not be matched (`unmatched`: `op 12: GSPMD made a dot,
    Shardy a transpose`)."""

    divergences: tuple[Divergence, ...]
    matched: int
    unmatched: tuple[str, ...]


def compare(gspmd_hlo: str, shardy_hlo: str) -> Comparison:
    """The two modules' decisions compared (see the module docstring)."""
    ours, theirs = _by_op(_resolved(gspmd_hlo)), _by_op(_resolved(shardy_hlo))
    pairs, unmatched = [], []
    for op in sorted(set(ours) | set(theirs)):
        a, b = _keyed(ours.get(op, [])), _keyed(theirs.get(op, []))
        order = {key: k for k, key in enumerate([*b, *a])}  # Shardy's print order first
        for key in sorted(set(a) | set(b), key=order.__getitem__):
            problem = _mismatch(a.get(key), b.get(key))
            if problem is not None:
                unmatched.append(f"op {op}: {problem}")
                continue
            pairs.append((op, key[2], a[key], b[key]))
    differing = {}
    for op, part, g, s in pairs:
        if not _same(g.sharding, s.sharding):
            differing[s.name] = (op, part, g, s)
    divergences = tuple(
        Divergence(
            op,
            part,
            s.opcode,
            _plain_shape(s.shape),
            g.sharding or REPLICATED,
            s.sharding or REPLICATED,
            tuple(dict.fromkeys(differing[n][0] for n in s.operands if n in differing)),
            s.index,
        )
        for op, part, g, s in differing.values()
    )
    return Comparison(divergences, len(pairs), tuple(unmatched))


def _resolved(hlo: str) -> list[Instruction]:
    """The instructions, a `get-tuple-element` without a sharding of its own given its
    element of the tuple's (a tuple sharding's element, or the one sharding all share)."""
    found = instructions(hlo)
    by_name = {inst.name: inst for inst in found}
    out = []
    for inst in found:
        if inst.sharding is None and inst.index is not None and inst.operands:
            tuple_ = by_name.get(inst.operands[0])
            element = _element(tuple_.sharding, inst.index) if tuple_ is not None else None
            inst = replace(inst, sharding=element)
        out.append(inst)
    return out


def _element(sharding: str | None, index: int) -> str | None:
    if sharding is None:
        return None
    try:
        parsed = parse(sharding)
    except ShardyConvertError:
        return None
    if parsed.kind is not Kind.TUPLE:
        return sharding
    elements = parsed.elements
    return str(elements[index]) if index < len(elements) else None


def _by_op(found: list[Instruction]) -> dict[int, list[Instruction]]:
    by_op: dict[int, list[Instruction]] = {}
    for inst in found:
        op = index_of(inst.op_name)
        if op is not None and inst.opcode != "parameter":
            by_op.setdefault(op, []).append(inst)
    return by_op


def _keyed(found: list[Instruction]) -> dict[tuple, Instruction]:
    """One op's instructions by (opcode, tuple index, occurrence): XLA prints the elements of
    a tuple in no fixed order, so the k-th `get-tuple-element` is matched by its index."""
    seen: dict[tuple, int] = {}
    keyed = {}
    for inst in found:
        kind = (inst.opcode, inst.index)
        k = seen[kind] = seen.get(kind, -1) + 1
        keyed[(*kind, k)] = inst
    return keyed


def _mismatch(g: Instruction | None, s: Instruction | None) -> str | None:
    if g is None:
        assert s is not None
        return f"only Shardy's program has this {s.opcode} {s.shape}"
    if s is None:
        return f"only GSPMD's program has this {g.opcode} {g.shape}"
    if g.opcode != s.opcode or _plain_shape(g.shape) != _plain_shape(s.shape):
        return f"GSPMD made {g.opcode} {g.shape}, Shardy {s.opcode} {s.shape}"
    return None


def _same(a: str | None, b: str | None) -> bool:
    try:
        return normalize(a or REPLICATED) == normalize(b or REPLICATED)
    except ShardyConvertError:  # a form the algebra does not read: compare as printed
        return (a or REPLICATED) == (b or REPLICATED)


def _plain_shape(shape: str) -> str:
    """The shape without its layouts: `f32[8,8]{1,0}` -> `f32[8,8]` (the partitioners' layout
    passes may differ where the values do not)."""
    out, depth = [], 0
    for ch in shape:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)
