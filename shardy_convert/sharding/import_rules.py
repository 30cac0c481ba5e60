"""The checks of import-shardings as one pure rule set: shardings and value types in, findings
out, no MLIR.

The import-shardings pass raises the first error a rule finds (before it rewrites anything);
`inspect` reports every finding of every rule. The MLIR side (`walker.sites`) describes each
sharding as a `Placed`: the string, its parsed form, where it sits and the types of the values
it describes. A rule is a function `(ModuleFacts) -> Iterator[Finding]`; `RULES` is their
order, which is the order errors are reported in.

    code                   severity  what
    manual-at-boundary     error     a `{manual}` value crosses the function boundary (no
                                     Shardy form: a manual computation's operands and results
                                     are global)
    tuple-mismatch         error     a tuple sharding whose arity is not the op's result count
    tuple-on-value         error     a tuple sharding on one func argument or result
    not-a-tensor           error     a sharding on a value that is no ranked tensor (or token)
    rank-mismatch          error     a tile rank that is not the value's rank
    device-count-conflict  error     tiled shardings (or the device count the module states)
                                     disagree on the number of devices
    device-out-of-range    error     a maximal sharding names a device the module does not have
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..errors import plural
from . import HloSharding, Kind, SubgroupType

# Findings whose module is valid GSPMD but has no Shardy form (see errors.NoShardyFormError).
NO_SHARDY_FORM = frozenset({"manual-at-boundary"})


@dataclass(frozen=True)
class ValueType:
    """The type of one sharded value: its text and rank (None: not a ranked tensor; a
    `!stablehlo.token` has rank 0)."""

    text: str
    rank: int | None


@dataclass(frozen=True)
class Placed:
    """One sharding string where it sits: kind "module", "arg", "result" or "op", the string
    as written, its parsed form, the values it describes (an op: one per result; module
    attributes: none), and `where`, which gives its location for messages (`2:19: arg 0 of
    @main`) when a finding needs it (locations cost a walk up the IR)."""

    kind: str
    text: str
    sharding: HloSharding
    types: tuple[ValueType, ...] = ()
    where: Callable[[], str | None] = field(default=lambda: None, compare=False, repr=False)

    @property
    def location(self) -> str | None:
        return self.where()


@dataclass(frozen=True)
class ModuleFacts:
    """Every sharding of a module, in the walker's order, and the device count the module (or
    the caller) states, with where that count comes from (`mhlo.num_partitions`,
    `num_devices`)."""

    placed: tuple[Placed, ...]
    num_devices: int | None = None
    count_source: str = "mhlo.num_partitions"


@dataclass(frozen=True)
class Finding:
    """What a rule found at one sharding; `element` is the tuple element or value index when
    the finding is about one of several values."""

    severity: str
    code: str
    message: str
    placed: Placed
    element: int | None = None

    @property
    def location(self) -> str | None:
        return self.placed.location


def is_manual(s: HloSharding) -> bool:
    return s.kind is Kind.MANUAL or SubgroupType.MANUAL in s.subgroups


def manual_at_boundary(facts: ModuleFacts) -> Iterator[Finding]:
    for p in facts.placed:
        if p.kind in ("arg", "result") and any(is_manual(leaf) for leaf in p.sharding.leaves()):
            yield Finding(
                "error",
                "manual-at-boundary",
                f'a manual value ("{p.text}") crosses the function boundary; Shardy has no '
                "form for it (a manual computation's operands and results are global)",
                p,
            )


def tuple_arity(facts: ModuleFacts) -> Iterator[Finding]:
    for p in facts.placed:
        if p.kind != "op" or p.sharding.kind is not Kind.TUPLE:
            continue
        if len(p.sharding.elements) != len(p.types):
            yield Finding(
                "error",
                "tuple-mismatch",
                f'tuple sharding "{p.text}" has {plural(len(p.sharding.elements), "element")} but '
                f"the op has {plural(len(p.types), 'result')}",
                p,
            )


def value_types(facts: ModuleFacts) -> Iterator[Finding]:
    """Each value a sharding describes is a ranked tensor (or token) of the sharding's rank."""
    for p in facts.placed:
        if p.kind == "module":
            continue
        leaves = p.sharding.leaves()
        if p.kind != "op" and len(leaves) != 1:
            yield Finding(
                "error", "tuple-on-value", f'tuple sharding "{p.text}" on a single value', p
            )
            continue
        yield from _ranks(p, leaves)


def _ranks(p: Placed, leaves: list[HloSharding]) -> Iterator[Finding]:
    tuple_ = p.sharding.kind is Kind.TUPLE
    if not tuple_:
        leaves = leaves * len(p.types)
    for k, (leaf, value) in enumerate(zip(leaves, p.types)):
        if value.rank is None:
            yield Finding(
                "error",
                "not-a-tensor",
                f'sharding "{p.text}" on a value of type {value.text}, which is not a ranked '
                "tensor",
                p,
                k,
            )
            return
        if leaf.kind is not Kind.TILED or leaf.is_replicated or len(leaf.data_dims) == value.rank:
            continue
        which = f"element {k} of " if tuple_ else ""
        yield Finding(
            "error",
            "rank-mismatch",
            f'{which}sharding "{p.text}" has {len(leaf.data_dims)} tile dims but the value '
            f"has rank {value.rank}",
            p,
            k,
        )


def tiled_count(sharding: HloSharding) -> int | None:
    """The device count a sharding states: that of its tiled, non-replicated leaves."""
    counts = {
        leaf.tile_assignment.num_devices
        for leaf in sharding.leaves()
        if leaf.kind is Kind.TILED and not leaf.is_replicated
    }
    return max(counts) if counts else None


def device_counts(facts: ModuleFacts) -> Iterator[Finding]:
    """Every tiled sharding names the same number of devices (and the stated count, if any),
    and every maximal device is one of them. A finding sits at a sharding that disagrees and
    quotes the one it disagrees with (the first tiled sharding, or the stated count)."""
    count, first = facts.num_devices, None
    for p in facts.placed:
        for leaf in p.sharding.leaves():
            n = tiled_count(leaf)
            if n is None:
                continue
            if first is None:
                first = (p, n)
            expected = count if count is not None else first[1]
            if n != expected:
                said = (
                    facts.count_source
                    if count is not None
                    else f'"{first[0].text}" at {first[0].location}'
                )
                yield Finding(
                    "error",
                    "device-count-conflict",
                    f'sharding "{p.text}" spans {n} devices but {said} says {expected}',
                    p,
                )
                return
    known = count if count is not None else first[1] if first else None
    if known is not None:
        yield from _maximal_devices(facts, known)


def _maximal_devices(facts: ModuleFacts, count: int) -> Iterator[Finding]:
    for p in facts.placed:
        for leaf in p.sharding.leaves():
            if leaf.kind is Kind.MAXIMAL and leaf.device is not None and leaf.device >= count:
                yield Finding(
                    "error",
                    "device-out-of-range",
                    f'sharding "{p.text}" puts the value on device {leaf.device}, but the '
                    f"module runs on {plural(count, 'device')}",
                    p,
                )
                return


# In this order: the first error found is the one import-shardings reports.
RULES: tuple[Callable[[ModuleFacts], Iterator[Finding]], ...] = (
    manual_at_boundary,
    tuple_arity,
    value_types,
    device_counts,
)


def check(facts: ModuleFacts) -> list[Finding]:
    """Every finding of every rule, in rule order, then walk order."""
    return [f for rule in RULES for f in rule(facts)]


def first_error(facts: ModuleFacts) -> Finding | None:
    """The first error of the rules in order, without running the rules after it."""
    for rule in RULES:
        for f in rule(facts):
            if f.severity == "error":
                return f
    return None
