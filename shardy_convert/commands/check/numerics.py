"""The values' verdict: GSPMD's program, Shardy's and the unpartitioned one run on the same
inputs, and, where they disagree, run again where float noise cannot hide a real difference.

First run: the programs in their own types on inputs drawn by what each argument is
(draws.py) or the user's. All three agree (up to float reassociation, values.py): same program.
Otherwise the disagreement may be reduction-order noise the draw amplified (AdamW divides by
square roots of near-zero second moments: two right programs end 1e-3 apart) or a real
difference, and one run cannot tell. So the three run again, widened to f64 (widen.py; the
same inputs, exactly): noise shrinks by nine orders of magnitude there, a moved shard does not.
Where the module cannot be widened, the second run draws again (another seed, inputs at a
quarter of the scale) and says that it is the weaker evidence. The verdict is the second run's:

- all three agree: same program up to float reassociation (the first run's difference was
  noise);
- GSPMD agrees with the unpartitioned run, Shardy does not: conversion differs, with each
  output, its magnitude and the devices that hold the differing elements; unless the same
  Shardy program on the identity device order agrees (device order moves shards, never
  values): then the Shardy partitioner is wrong on this order (a compiler difference);
- Shardy agrees, GSPMD does not: compiler differs (GSPMD computes it wrongly);
- neither agrees but the two agree with each other: compiler differs (XLA partitions this
  program wrongly, GSPMD and Shardy alike; the conversion is faithful);
- neither agrees and they differ from each other: conversion differs, unless the identity
  order clears the Shardy side.

Without an unpartitioned program (manual regions, random numbers) GSPMD against Shardy decides
alone, in the second run too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...errors import ShardyConvertError
from ...xla import execute as xla_execute
from .compiled import Compiled, compile_module, compile_program, execute
from .program import Program, read_original
from .reference import identity_order
from .values import CANCELLATION_FLOOR, Agreement, agreements, max_relative
from .verdict import Pair
from .widen import widened

SECOND_DRAW_SEED = 1
SECOND_DRAW_SCALE = 0.25


@dataclass(frozen=True)
class Mismatch:
    """One output on which two programs disagree in a run: who (`between`), by how much
    (`agreement`), in which run, and the devices (ids) that hold a differing element in the
    partitioned program named first."""

    between: Pair
    agreement: Agreement
    run: str = ""
    devices: tuple[int, ...] = ()

    def __str__(self) -> str:
        text = f"{self.between}, {self.agreement}"
        if self.run:
            text += f" in the {self.run}"
        if self.devices:
            text += f", on {_device_list(self.devices)}"
        return text


@dataclass(frozen=True)
class Rerun:
    """The second run: `how` "f64" (widened) or "second draw" (`why`: why not f64), the
    largest relative difference among the three programs in it, whether they all agree."""

    how: str
    relative: float
    agrees: bool
    why: str = ""
    first_relative: float = 0.0  # the first run's largest difference, which asked for it

    @property
    def run(self) -> str:
        return "f64 run" if self.how == "f64" else "second draw"

    def __str__(self) -> str:
        first = f"the first run differed by up to {self.first_relative:.2g} relative"
        if self.how == "f64":
            said = "agrees" if self.agrees else "still differs"
            return f"{first}; rerun in f64, it {said} (max relative {self.relative:.2g})"
        said = "agrees" if self.agrees else "still differs"
        return (
            f"{first}; not widened to f64 ({self.why}): a second draw (seed "
            f"{SECOND_DRAW_SEED}, inputs at {SECOND_DRAW_SCALE}x) {said} "
            f"(max relative {self.relative:.2g})"
        )


@dataclass
class Run:
    """One run of the programs on one set of inputs: their outputs (`reference` None without
    an unpartitioned program) and the programs, to place a difference on devices."""

    name: str
    gspmd: Compiled
    shardy: Compiled
    values: tuple[list, list, list | None]
    inputs: list
    texts: tuple[str | bytes, str | bytes]  # (original, converted) as compiled

    @property
    def pairs(self) -> dict[Pair, list[Agreement]]:
        want, got, ref = self.values
        found = {Pair.BOTH: agreements(want, got)}
        if ref is not None:
            found[Pair.GSPMD_REFERENCE] = agreements(ref, want)
            found[Pair.SHARDY_REFERENCE] = agreements(ref, got)
        return found

    def close(self, between: Pair) -> bool:
        return all(a.close for a in self.pairs[between])

    @property
    def agrees(self) -> bool:
        return all(a.close for found in self.pairs.values() for a in found)

    @property
    def relative(self) -> float:
        return max(max_relative(found) for found in self.pairs.values())

    def mismatches(self, between: Pair) -> list[Mismatch]:
        """Every output on which `between` disagrees, placed on the devices of its partitioned
        side (Shardy's where both are)."""
        program = self.gspmd if between is Pair.GSPMD_REFERENCE else self.shardy
        a, b = self._arrays(between)
        largest = max((_magnitude(v) for v in [*a, *b] if _is_float(v)), default=0.0)
        run = "" if self.name == "first run" else self.name
        return [
            Mismatch(between, found, run, _devices(program, found.index, a, b, largest))
            for found in self.pairs[between]
            if not found.close
        ]

    def _arrays(self, between: Pair) -> tuple[list, list]:
        want, got, ref = self.values
        if between is Pair.BOTH:
            return want, got
        # a pair with the reference: a run that has one
        return ref, (got if between is Pair.SHARDY_REFERENCE else want)  # type: ignore[return-value]


@dataclass
class Sides:
    """What the values are judged on: both compiled programs, both programs as read (the
    original with its unpartitioned reference, where one was asked for and exists), and the
    inputs (`draw(signature, seed, scale)`)."""

    gspmd: Compiled
    shardy: Compiled
    original: Program
    converted: Program
    draw: Callable
    notes: list[str] = field(default_factory=list)


@dataclass
class Judgement:
    """The values' outcome for `verdict.py`: `same` (with the first run's max relative), or
    the mismatches and the closing line, and `compiler` when XLA is at fault."""

    same: bool
    relative: float = 0.0
    lines: list[str] = field(default_factory=list)
    compiler: bool = False
    rerun: Rerun | None = None
    runs: list[Run] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)


def judge(sides: Sides) -> Judgement:
    """The first run, then the rerun where it disagrees (see the module docstring)."""
    inputs = sides.draw(sides.gspmd.signature, 0, 1.0)
    reference = _reference(sides.original, sides.notes)
    texts = (sides.original.text, sides.converted.text)
    first = _run("first run", (sides.gspmd, sides.shardy, reference), inputs, texts)
    if first.agrees:
        return Judgement(True, first.relative, runs=[first])
    second, rerun = _rerun(sides, inputs, first.relative, reference)
    if second.agrees:
        return Judgement(True, first.relative, rerun=rerun, runs=[first, second])
    judgement = _decide(second)
    judgement.rerun, judgement.runs = rerun, [first, second]
    return judgement


def _run(name: str, programs: tuple, inputs: list, texts: tuple) -> Run:
    """Runs (GSPMD, Shardy, reference or None) on `inputs`."""
    gspmd, shardy, reference = programs
    ref = None if reference is None else execute(reference, inputs)
    values = (execute(gspmd, inputs), execute(shardy, inputs), ref)
    return Run(name, gspmd, shardy, values, inputs, texts)


def _reference(original: Program, notes: list[str] | None = None) -> Compiled | None:
    """The unpartitioned program on one device, or None (with `notes`, a note says why, where
    one was asked for)."""
    one = original.reference
    if one is None:
        if original.no_reference and notes is not None:
            notes.append(f"no unpartitioned reference ({original.no_reference})")
        return None
    try:
        return compile_program(one.text, one.signature, 1, shardy=False)
    except ShardyConvertError as e:
        if notes is not None:
            notes.append(f"no unpartitioned reference ({e.message})")
        return None


def _rerun(
    sides: Sides, inputs: list, first: float, reference: Compiled | None
) -> tuple[Run, Rerun]:
    """The second run: widened to f64 where the module allows, else a second draw (with the
    first run's `reference`)."""
    wide_original, why = widened(_text(sides.original.text))
    wide_converted, why_converted = widened(_text(sides.converted.text))
    why = why or why_converted
    if wide_original is not None and wide_converted is not None:
        try:
            run = _widened_run(sides, wide_original, wide_converted, inputs)
            return run, Rerun("f64", run.relative, run.agrees, first_relative=first)
        except ShardyConvertError as e:  # XLA refuses it widened (NotRun among them)
            why = f"widened, it does not compile or run: {e.message.splitlines()[0]}"
    again = sides.draw(sides.gspmd.signature, SECOND_DRAW_SEED, SECOND_DRAW_SCALE)
    texts = (sides.original.text, sides.converted.text)
    run = _run("second draw", (sides.gspmd, sides.shardy, reference), again, texts)
    return run, Rerun("second draw", run.relative, run.agrees, why, first)


def _widened_run(sides: Sides, original: str, converted: str, inputs: list) -> Run:
    n = len(sides.gspmd.devices)
    wide = read_original(original, reference=sides.original.reference is not None)
    gspmd = compile_program(wide.text, wide.signature, n, shardy=False)
    shardy = compile_module(converted, n, shardy=True)
    values = [x.astype(dtype) for x, (_, dtype) in zip(inputs, gspmd.signature.args)]
    reference = _reference(wide)
    return _run("f64 run", (gspmd, shardy, reference), values, (original, converted))


def _decide(run: Run) -> Judgement:
    """The verdict of a second run that still disagrees (see the module docstring)."""
    both = Pair.BOTH
    if run.values[2] is None:
        return _judged(run, run.mismatches(both), "")
    gspmd_ok = run.close(Pair.GSPMD_REFERENCE)
    shardy_ok = run.close(Pair.SHARDY_REFERENCE)
    found = [] if gspmd_ok else run.mismatches(Pair.GSPMD_REFERENCE)
    found += [] if shardy_ok else run.mismatches(Pair.SHARDY_REFERENCE)
    if not gspmd_ok and shardy_ok:
        return _judged(
            run,
            found,
            f"in the {run.name} the Shardy result matches the reference and the GSPMD "
            "original does not: GSPMD computes it wrongly (an XLA bug, not the conversion)",
        )
    if not gspmd_ok and run.close(both):
        return _judged(
            run,
            found,
            f"in the {run.name} both partitioned programs differ from the program run "
            "unpartitioned on one device, by the same values: an XLA bug, not the conversion",
        )
    if _identity_order_matches(run):
        return _judged(
            run,
            found,
            "the same Shardy program on the identity device order matches the reference: "
            "the Shardy partitioner is wrong on this mesh's device order (an XLA bug)",
        )
    return _judged(run, found + ([] if gspmd_ok else run.mismatches(both)), "")


def _judged(run: Run, found: list[Mismatch], compiler: str) -> Judgement:
    """A verdict of differing values: the conversion's, or XLA's where `compiler` says why."""
    lines = [str(m) for m in found] + ([compiler] if compiler else [])
    return Judgement(False, run.relative, lines, bool(compiler), mismatches=found)


def _identity_order_matches(run: Run) -> bool:
    """Whether the run's Shardy program on the identity device order agrees with the run's
    reference (on the run's inputs, in the run's types)."""
    text = identity_order(run.texts[1])
    if text is None:
        return False
    values = execute(compile_module(text, len(run.gspmd.devices), shardy=True), run.inputs)
    # a compiler difference is judged on a run with a reference
    return all(a.close for a in agreements(run.values[2], values))  # type: ignore[arg-type]


def _text(module: str | bytes) -> str:
    if isinstance(module, str):
        return module
    from ...ir.parse import new_context, parse_module, print_module

    with new_context() as ctx:
        return print_module(parse_module(module, ctx))


# --- where a difference lies ------------------------------------------------------------------


def _devices(program: Compiled, index: int, a: list, b: list, largest: float) -> tuple[int, ...]:
    """The devices of `program` that hold an element of output `index` where `a` and `b`
    differ beyond tolerance; () when the output is not placed (one device) or not compared."""
    x, y = a[index], b[index]
    if x.shape != y.shape or len(program.devices) < 2:
        return ()
    mask = differing(x, y, CANCELLATION_FLOOR * largest)
    shape = program.signature.results[index][0]
    try:
        shards = xla_execute.shard_indices(program.program, index, shape)
    except Exception:  # a sharding jax cannot place (a tuple): say no devices
        return ()
    return tuple(device for device, where in shards if mask[where].any())


def differing(x: np.ndarray, y: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Where two arrays differ: beyond their tolerance at the output's scale for floats (see
    values.py), at all for integers; NaN and infinities where only one side has them."""
    from .values import tolerance

    if not _is_float(x):
        return np.asarray(x != y)
    u, v = (
        x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
        y.astype(np.complex128 if y.dtype.kind == "c" else np.float64),
    )
    finite = np.isfinite(u) & np.isfinite(v)
    scale = max(_magnitude(u), _magnitude(v), floor)
    far = np.abs(np.where(finite, u - v, 0)) > tolerance(x.dtype) * scale
    odd = ~finite & ~((np.isnan(u) & np.isnan(v)) | (u == v))
    return far | odd


def _magnitude(values: np.ndarray) -> float:
    x = np.abs(np.asarray(values))
    finite = x[np.isfinite(x)]
    return float(np.max(finite)) if finite.size else 0.0


def _is_float(values: np.ndarray) -> bool:
    kind = values.dtype
    return kind.kind in "fc" or kind.name == "bfloat16" or kind.name.startswith("float")


def _device_list(devices: tuple[int, ...]) -> str:
    """`device 3`, `devices 0, 1, 4, 5`, `devices 0-7` for a run of ids."""
    if len(devices) == 1:
        return f"device {devices[0]}"
    ordered = sorted(devices)
    if ordered == list(range(ordered[0], ordered[-1] + 1)) and len(ordered) > 2:
        return f"devices {ordered[0]}-{ordered[-1]}"
    return "devices " + ", ".join(str(d) for d in ordered)
