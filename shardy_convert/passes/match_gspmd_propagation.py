"""match-gspmd-propagation: GSPMD's decisions pinned where Shardy's propagation departs from
them, as `@Sharding` calls the import turns into `sdy.sharding_constraint`s, so that Shardy
compiles the program GSPMD compiles."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import ClassVar

from ..errors import ShardyConvertError
from ..formats.propagation_diff import Comparison, Divergence, compare
from ..ir.analyses import Analyses
from ..ir.bindings import ir
from ..ir.op_tags import NoOpTags, TaggedOp, ops_in_order, tag_ops
from ..ir.ops import reroute_uses, sharding_call
from ..ir.pipeline import run_pipeline
from ..ir.walker import SHARDING
from ..sharding import Kind, SubgroupType, normalize, parse
from ..xla.options import compile_options
from ..xla.propagation import compile_propagated
from .import_custom_calls import ImportCustomCallsPass
from .import_sharding_groups import ImportShardingGroupsPass
from .match_gspmd_boundary import CompilesAsImported, device_count, module_bytecode

# What the conversion runs after this pass, as far as XLA's compile of a trial needs it.
_AFTER = ("sdy-lift-inlined-meshes", "sdy-manual-axes-cleanup")
_PIN_NAME = "sc.pin"  # the pins' location: no op tag, so no side compares them


@dataclass(frozen=True)
class Pin:
    """Op `op` of the module (`name`, at `location`) pinned to GSPMD's `sharding`."""

    op: int
    name: str
    location: str | None
    sharding: str
    result: int = 0

    def __str__(self) -> str:
        where = f" at {self.location}" if self.location else ""
        which = f" result {self.result}" if self.result else ""
        return f"op {self.op}{which} ({self.name}{where}) pinned to {self.sharding}"


@dataclass(frozen=True)
class Unpinned:
    """A divergence left as Shardy decides it, and why."""

    op: int
    name: str
    why: str

    def __str__(self) -> str:
        return f"op {self.op} ({self.name}): {self.why}"


@dataclass(frozen=True)
class PropagationOutcome:
    """What the pass did (what its `run` returns): the `pins` it wrote, the divergences it
    left (`unpinned`, each with its reason), how many values still diverge after the last
    round (`remaining`), the Shardy compiles it took (`rounds`) and their time."""

    pins: tuple[Pin, ...] = ()
    unpinned: tuple[Unpinned, ...] = ()
    remaining: int = 0
    rounds: int = 0
    seconds: float = 0.0
    reason: str | None = None
    unmatched: int = field(default=0)

    @property
    def complete(self) -> bool:
        """Every divergence pinned: nothing left, nothing refused."""
        return self.reason is None and not self.unpinned and not self.remaining

    def __str__(self) -> str:
        text = (
            f"{len(self.pins)} pin{'' if len(self.pins) == 1 else 's'}, "
            f"{self.remaining} value{'' if self.remaining == 1 else 's'} still differ "
            f"after {self.rounds} round{'' if self.rounds == 1 else 's'}; {self.seconds:.3f} s"
        )
        if self.unpinned:
            text += f"; {len(self.unpinned)} not pinned: {self.unpinned[0]}"
        return text if self.reason is None else f"{text}; {self.reason}"


@dataclass(frozen=True)
class MatchGspmdPropagationPass(CompilesAsImported):
    """Compiles the module with GSPMD and, round by round, the module converted with Shardy
    (jaxlib's CPU client, XLA dumping each partitioner's decisions after propagation); where
    a value's sharding differs and none of its operands' does (the divergence starts there),
    writes GSPMD's decision as a `stablehlo.custom_call @Sharding` on that value, until
    nothing differs or nothing more can be pinned. A value whose GSPMD sharding has no Shardy
    form (manual, uneven, not a view of the mesh) is left unpinned, and the returned
    `PropagationOutcome` says which and why; a module XLA does not compile is left as it is."""

    NAME: ClassVar[str] = "match-gspmd-propagation"
    max_rounds: int = 8

    def run(self, module: ir.Operation, analyses: Analyses | None = None) -> PropagationOutcome:
        importer = self.strict_importer()
        found = importer.check(module)  # XLA aborts on some malformed shardings: checked first
        count = device_count(module, [s for _, s in found], self.num_devices, self.mesh)
        count = count or self.fallback_devices
        if count is None or count == 1:
            return PropagationOutcome(reason="nothing to match on one device")
        work = module.clone()
        try:
            return self._match(module, work.operation, count)
        finally:
            work.operation.erase()

    def _match(self, module: ir.Operation, work: ir.Operation, count: int) -> PropagationOutcome:
        try:
            table = tag_ops(work)
        except NoOpTags as e:
            return PropagationOutcome(reason=e.message)
        ops = ops_in_order(work)  # before any pin: positions are the tags' numbers
        start = time.perf_counter()
        try:
            gspmd = self._compile(work, count, shardy=False)
        except ShardyConvertError as e:
            return PropagationOutcome(reason=f"GSPMD does not compile it: {e.message}")
        pins: dict[tuple[int, int], Pin] = {}
        unpinned: dict[int, Unpinned] = {}
        rounds, comparison = 0, None
        while rounds < self.max_rounds:
            rounds += 1
            try:
                comparison = compare(gspmd, self._compile(self._converted(work), count, True))
            except ShardyConvertError as e:
                return self._outcome(module, pins, unpinned, comparison, rounds, start, e.message)
            new = self._candidates(comparison, table, pins, unpinned, count)
            if not new:
                break
            made = [_pin(ops[pin.op], pin, tagged=True) for pin in new]
            if self._refused(work) is not None:  # then each alone: keep those it takes
                for call in made:
                    _unpin(call)
                new = self._accepted(work, ops, new, unpinned)
            pins.update({(p.op, p.result): p for p in new})
            if not new:
                break
        return self._outcome(module, pins, unpinned, comparison, rounds, start, None)

    def _candidates(self, comparison, table, pins, unpinned, count) -> list[Pin]:
        """The divergences that start a chain and can be pinned; the others recorded."""
        new: list[Pin] = []
        # what needs no pin, and what is pinned already (its own instruction may keep
        # Shardy's decision: the pin reshards after it), does not block what follows
        needless = {k for k, u in unpinned.items() if not u.why} | {op for op, _ in pins}
        for d in comparison.divergences:
            done = (d.op, d.index or 0) in pins or d.op in unpinned
            if done or not set(d.after) <= needless:
                continue
            op = table[d.op]
            found, why = _pins_for(d, op, count)
            new += found
            if why is not None:  # "" (needs no pin) is kept too: what follows may start a chain
                unpinned[d.op] = Unpinned(d.op, op.name, why)
                if not why:
                    needless.add(d.op)
        return new

    def _outcome(self, module, pins, unpinned, comparison, rounds, start, reason):
        ops = ops_in_order(module)
        for pin in pins.values():
            _pin(ops[pin.op], pin, tagged=False)
        needless = {k for k, u in unpinned.items() if not u.why}
        left = [
            d
            for d in (comparison.divergences if comparison is not None else ())
            if d.op not in {op for op, _ in pins} and d.op not in needless
        ]
        return PropagationOutcome(
            tuple(pins.values()),
            tuple(u for u in unpinned.values() if u.why),
            len(left),
            rounds,
            time.perf_counter() - start,
            reason,
            0 if comparison is None else len(comparison.unmatched),
        )

    def _accepted(self, work, ops, new: list[Pin], unpinned: dict) -> list[Pin]:
        """The pins the import takes one at a time (left in `work`); the others recorded."""
        kept = []
        for pin in new:
            call = _pin(ops[pin.op], pin, tagged=True)
            refused = self._refused(work)
            if refused is None:
                kept.append(pin)
                continue
            _unpin(call)
            unpinned[pin.op] = Unpinned(pin.op, pin.name, refused)
        return kept

    def _converted(self, work: ir.Operation) -> ir.Operation:
        """A copy of `work` converted as the conversion will (the caller erases it)."""
        copy = work.clone()
        steps = (
            ImportShardingGroupsPass(),
            self.strict_importer(),
            ImportCustomCallsPass(),
            *_AFTER,
        )
        run_pipeline(copy, steps)
        return copy

    def _refused(self, work: ir.Operation) -> str | None:
        try:
            self._converted(work).erase()
        except ShardyConvertError as e:
            return f"GSPMD's shardings have no Shardy form here: {e.message}"
        return None

    def _compile(self, module: ir.Operation, count: int, shardy: bool) -> str:
        options = compile_options(
            count,
            shardy=shardy,
            propagate_to_parameters=self.allow_spmd_sharding_propagation_to_parameters,
            propagate_to_output=self.allow_spmd_sharding_propagation_to_output,
            proto=self.compile_options,
            optimize=False,
        )
        try:
            return compile_propagated(module_bytecode(module), count, options, shardy=shardy).hlo
        finally:
            if shardy:
                module.erase()


def _pins_for(d: Divergence, op: TaggedOp, count: int) -> tuple[list[Pin], str | None]:
    """The pins that give op `op` GSPMD's decision (one per result that differs: an op of
    several results is a tuple in XLA's program), and why the rest cannot be pinned: ""
    for an op that needs no pin (a constant is made on every device where it is used), None
    when nothing is left out."""
    if op.name == "stablehlo.constant":
        return [], ""
    try:
        ours, theirs = parse(d.gspmd), parse(d.shardy)
    except ShardyConvertError as e:
        return [], f"GSPMD's {d.gspmd} does not parse: {e.message}"
    if len(op.results) == 1 or d.index is not None:  # one value (a tuple's element)
        k = d.index or 0
        result = op.results[k] if k < len(op.results) else None
        why = _unpinnable(ours, d.gspmd, _dims(d.shape), result, count)
        return ([], why) if why else ([Pin(op.index, op.name, op.location, d.gspmd, k)], None)
    count_ = len(op.results)
    mine_all = ours.elements if ours.kind is Kind.TUPLE else (ours,) * count_
    others = theirs.elements if theirs.kind is Kind.TUPLE else (theirs,) * count_
    if len(mine_all) != count_ or len(others) != count_:
        return [], f"XLA's {d.opcode} {d.shape} is not the op's {count_} results"
    pins, whys = [], []
    for k, (mine, other) in enumerate(zip(mine_all, others)):
        if normalize(str(mine)) == normalize(str(other)):
            continue
        result = op.results[k]
        why = _unpinnable(mine, str(mine), result[0] if result else None, result, count)
        if why:
            whys.append(f"result {k}: {why}")
        else:
            pins.append(Pin(op.index, op.name, op.location, str(mine), k))
    return pins, "; ".join(whys) or None


def _unpinnable(sharding, text: str, dims, result, count: int) -> str | None:
    """Why GSPMD's `sharding` of a value cannot be pinned faithfully, None if it can."""
    if result is None:
        return "not a tensor"
    shape, _ = result
    if dims != shape:
        return f"XLA's value of shape {dims} is not the op's result"
    if sharding.kind is Kind.MANUAL or SubgroupType.MANUAL in sharding.subgroups:
        return "inside a manual region (GSPMD's sharding is manual)"
    if sharding.kind is Kind.TILED and not sharding.is_replicated:
        if sharding.num_devices != count:
            return f"GSPMD's {text} spans {sharding.num_devices} devices, not {count}"
        if any(size % ways for size, ways in zip(shape, sharding.data_dims)):
            return f"GSPMD's {text} is uneven here (GSPMD pads it; Shardy has no such form)"
    if sharding.kind not in (Kind.TILED, Kind.REPLICATED):
        return f"GSPMD's {text} is {sharding.kind.name.lower()}"
    return None


def _dims(shape: str) -> tuple[int, ...] | None:
    """`f32[8,16]` -> (8, 16); None for a tuple or a dynamic shape."""
    if shape.startswith("(") or "[" not in shape:
        return None
    inside = shape[shape.index("[") + 1 : shape.rindex("]")]
    try:
        return tuple(int(x) for x in inside.split(",") if x)
    except ValueError:
        return None


def _unpin(call: ir.Operation) -> None:
    """Undoes `_pin`: the pinned value's uses read it directly again."""
    call.results[0].replace_all_uses_with(call.operands[0])
    call.erase()


def _pin(op: ir.Operation, pin: Pin, *, tagged: bool) -> ir.Operation:
    """`@Sharding(result)` with `sharding` after `op`; every other use of the result reads the
    pinned value. In the tagged copy the call is named apart, so XLA's view of it is no op's."""
    value, sharding = op.results[pin.result], pin.sharding
    loc = ir.Location.name(_PIN_NAME, childLoc=op.location) if tagged else op.location
    attributes = {"backend_config": ir.StringAttr.get(""), SHARDING: ir.StringAttr.get(sharding)}
    call = sharding_call(value, attributes, loc=loc, ip=ir.InsertionPoint(op))
    call.move_after(op)  # made before `op` (InsertionPoint.after is not on every release)
    reroute_uses(value, call)
    return call


__all__ = ["Comparison", "MatchGspmdPropagationPass", "Pin", "PropagationOutcome", "Unpinned"]
