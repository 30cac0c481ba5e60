"""Pass pipelines written as text, like mlir-opt's `--pass-pipeline`.

    builtin.module(v1-to-v2, import-shardings{num-devices=8 mesh=x=2,y=4}, func.func(...))
    import-shardings,import-custom-calls,sdy-lift-inlined-meshes

A pipeline is a comma-separated list of steps; a step is a pass name with optional options in
`{key=value ...}`, or an op anchor (`func.func`) with a nested pipeline in `(...)`. The outer
`builtin.module(...)` may be left out. The project's passes run on the whole module (top level
only); every other name must be one of Shardy's passes registered in jaxlib (`sdy-*`,
`xla-sdy-*`; `list-passes` prints them). Every unknown name and bad option is reported at once.
"""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from typing import Any, NoReturn

from .. import regex
from ..errors import ShardyConvertError, UsageError, clip
from ..options import parse_device_ids, parse_mesh

_NAME = re.compile(r"[A-Za-z0-9_.\-]+")

# Shardy's passes, as this project knows them (jaxlib 0.10.2); `registered_shardy_passes()`
# keeps those the installed jaxlib registers.
SHARDY_PASSES = (
    "sdy-add-data-flow-edges sdy-add-func-data-flow-edges sdy-aggressive-propagate "
    "sdy-apply-sharding-constraints sdy-basic-propagate sdy-close-shardings "
    "sdy-constant-or-scalar-merger sdy-constant-or-scalar-splitter sdy-convert-global-to-local "
    "sdy-drop-sharding-and-mesh sdy-drop-sharding-rules sdy-explicit-gather-scatter-batching "
    "sdy-export-named-computations sdy-export-pipeline sdy-flatten-call-graph "
    "sdy-import-func-calls sdy-import-pipeline sdy-inline-meshes sdy-insert-explicit-reshards "
    "sdy-insert-func-call-reshards sdy-lift-inlined-meshes sdy-manual-axes-cleanup "
    "sdy-op-priority-propagate sdy-pad-for-divisibility sdy-populate-op-sharding-rules "
    "sdy-pre-order-funcs sdy-propagate-sharding-from-func-to-call sdy-propagate-to-func-results "
    "sdy-propagation-pipeline sdy-remove-all-gather-reduce-scatter-for-cmv1 "
    "sdy-remove-propagation-debug-info sdy-remove-sharding-groups sdy-remove-size-one-axes "
    "sdy-remove-sub-axes-in-input-output-shardings sdy-reshard-to-collectives "
    "sdy-resolve-permutation-factors sdy-save-module sdy-sharding-constraint-to-reshard "
    "sdy-sharding-group-import sdy-sink-data-flow-edges sdy-sink-func-data-flow-edges "
    "sdy-unflatten-call-graph sdy-update-non-divisible-input-output-shardings "
    "sdy-user-priority-propagate xla-sdy-export-ops xla-sdy-import-constants "
    "xla-sdy-import-sdy-custom-calls xla-sdy-import-shardings "
    "xla-sdy-open-while-free-vars-sharding xla-sdy-round-trip-dedup-meshes "
    "xla-sdy-round-trip-export-ops xla-sdy-round-trip-export-shardy-attrs "
    "xla-sdy-round-trip-import-shardy-attrs xla-sdy-round-trip-shard-map-export "
    "xla-sdy-round-trip-shard-map-import xla-sdy-stablehlo-export-manual-reduction-collectives "
    "xla-sdy-stablehlo-export-shardings xla-sdy-stablehlo-round-trip-export-callback-custom-calls "
    "xla-sdy-stablehlo-round-trip-shard-map-export"
).split()


@dataclass(frozen=True)
class Step:
    """One pipeline element: a pass with its options text, or an anchor with nested steps."""

    name: str
    options: str = ""
    nested: tuple[Step, ...] | None = None

    def __str__(self) -> str:
        options = f"{{{self.options}}}" if self.options else ""
        nested = "" if self.nested is None else f"({','.join(map(str, self.nested))})"
        return f"{self.name}{options}{nested}"


@functools.lru_cache(maxsize=64)
def read_steps(text: str) -> tuple[Step, ...]:
    """The module-level steps of a pipeline; raises UsageError at a syntax error. Kept per
    text (the steps are frozen): every convert runs the same few pipelines."""
    parser = _Parser(text)
    steps = parser.steps()
    parser.skip()
    if parser.pos != len(text):
        parser.fail("expected ',' or the end")
    if len(steps) == 1 and steps[0].name == "builtin.module" and steps[0].nested is not None:
        return steps[0].nested
    return steps


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, expected: str) -> NoReturn:
        shown = clip(self.text)
        raise UsageError(f'pass pipeline "{shown}": {expected} at column {self.pos + 1}')

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, char: str) -> bool:
        self.skip()
        return self.text.startswith(char, self.pos)

    def steps(self) -> tuple[Step, ...]:
        out = [self.step()]
        while self.peek(","):
            self.pos += 1
            out.append(self.step())
        return tuple(out)

    def step(self) -> Step:
        self.skip()
        m = _NAME.match(self.text, self.pos)
        if not m:
            self.fail("expected a pass name")
        self.pos = m.end()
        options = self.braces() if self.peek("{") else ""
        nested = None
        if self.peek("("):
            self.pos += 1
            nested = self.steps()
            if not self.peek(")"):
                self.fail("expected ')'")
            self.pos += 1
        return Step(m.group(), options, nested)

    def braces(self) -> str:
        """The text inside balanced `{...}` (quotes and nested braces kept)."""
        start, depth, quoted = self.pos, 0, False
        for i in range(self.pos, len(self.text)):
            c = self.text[i]
            if c == '"':
                quoted = not quoted
            elif not quoted and c in "{}":
                depth += 1 if c == "{" else -1
                if depth == 0:
                    self.pos = i + 1
                    return self.text[start + 1 : i].strip()
        self.fail("expected '}'")
        raise AssertionError  # fail raises


def option_pairs(text: str) -> list[tuple[str, str]]:
    """`num-devices=8 mesh=x=2,y=4` -> [("num-devices", "8"), ("mesh", "x=2,y=4")]."""
    pairs = []
    for token in re.findall(r'(?:[^\s"{]|"[^"]*"|\{[^}]*\})+', text):
        key, equals, value = token.partition("=")
        if not equals:
            raise UsageError(f'pass option "{token}": expected KEY=VALUE')
        pairs.append((key, value.strip('"')))
    return pairs


def python_pass_options(pass_name: str, cls, text: str) -> dict:
    """The keyword arguments of a project pass from its `{key=value ...}` text, each value
    read as its dataclass field's type says (`option_kinds`)."""
    kinds = option_kinds(cls)
    kwargs: dict = {}
    for key, value in option_pairs(text):
        field = key.replace("-", "_")
        if field not in kinds:
            known = ", ".join(sorted(f.replace("_", "-") for f in kinds)) or "none"
            raise UsageError(f"pass {pass_name} has no option {key} (its options: {known})")
        read, expected = _READERS[kinds[field]]
        try:
            kwargs[field] = read(value)
        except (ValueError, ShardyConvertError) as e:
            why = f": {e.message}" if isinstance(e, ShardyConvertError) else ""
            raise UsageError(
                f'pass {pass_name}: option {key} must be {expected}, not "{clip(value, 40)}"{why}'
            ) from None
    return kwargs


def instance(pass_name: str, cls, text: str = "", defaults: Mapping | None = None):
    """The pass `cls` with the options of its `{key=value ...}` text, over `defaults` (option
    values by field name, taken where `cls` has such a field: `opt --num-devices N` gives
    every pass of its pipeline that counts devices that count, unless its text says)."""
    names = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in (defaults or {}).items() if k in names and v is not None}
    kwargs.update(python_pass_options(pass_name, cls, text))
    return cls(**kwargs)


@functools.cache
def option_kinds(cls) -> dict[str, str]:
    """What each option of a pass dataclass takes, from its field's type: "mesh" (`NAME=SIZE,
    ...`), "ids" (a device order `3,6,0,5`), "flags" (a bool, or one per value: `true,false`),
    "bool", "count" or "path" (a str); "python" for data only Python gives (a tuple of
    dataclasses: the candidate meshes of import-shardings). A `bytes` field
    (match-gspmd-boundary's compile options: a program hands them over) has no text and is
    left out. Kept per class (`typing.get_type_hints` evaluates every annotation anew: ~0.1 ms
    a pass, paid on every convert before)."""
    hints = typing.get_type_hints(cls)
    kinds = {}
    for f in fields(cls):
        types = set(typing.get_args(hints[f.name])) or {hints[f.name]}
        types.discard(type(None))
        if types == {tuple[tuple[str, int], ...]}:
            kinds[f.name] = "mesh"
        elif types == {tuple[int, ...]}:
            kinds[f.name] = "ids"
        elif _dataclass_tuple(types):
            kinds[f.name] = "python"
        elif types == {bool, tuple[bool, ...]}:
            kinds[f.name] = "flags"
        elif types in ({bool}, {int}):
            kinds[f.name] = "bool" if bool in types else "count"
        elif types == {str}:
            kinds[f.name] = "path"
        elif types == {bytes}:
            continue
        else:
            raise TypeError(f"{cls.__name__}.{f.name}: no pipeline text for {hints[f.name]}")
    return kinds


def _dataclass_tuple(types: set) -> bool:
    (only,) = types if len(types) == 1 else (None,)
    args = typing.get_args(only)
    return typing.get_origin(only) is tuple and bool(args) and is_dataclass(args[0])


_BOOLS = {"true": True, "1": True, "false": False, "0": False}


def _bool(value: str) -> bool:
    return _BOOLS[value.lower()] if value.lower() in _BOOLS else _no(value)


def _flags(value: str) -> bool | tuple[bool, ...]:
    flags = tuple(_bool(v.strip()) for v in value.split(","))
    return flags[0] if len(flags) == 1 else flags


def _count(value: str) -> int:
    if value.isascii() and value.isdigit() and 0 < int(value) < 2**31:
        return int(value)
    return _no(value)


def _no(value: str):
    raise ValueError(value)


# Each kind's reader and what it expects, as a usage error says it.
_READERS: dict[str, tuple[Callable[[str], Any], str]] = {
    "mesh": (parse_mesh, "a mesh NAME=SIZE,..."),
    "ids": (parse_device_ids, "a device order ID,ID,... (each of 0..N-1 once)"),
    "python": (_no, "given from Python (it has no pipeline text)"),
    "flags": (_flags, "true or false, or one per value (true,false,...)"),
    "bool": (_bool, "true or false (or 1, 0)"),
    "count": (_count, "a positive count"),
    "path": (str, "a path"),
}
# How list-passes shows each kind.
SYNTAX = {
    "mesh": "NAME=SIZE,...",
    "ids": "ID,ID,...",
    "python": "(from Python)",
    "flags": "BOOL[,BOOL...]",
    "bool": "BOOL",
    "count": "N",
    "path": "PATH",
}


_RESTRICTED = regex.lazy(r"restricted to '([\w.]+)'")


def registered_shardy_passes() -> dict[str, str]:
    """The Shardy passes of SHARDY_PASSES that the installed jaxlib registers, each with the
    op it runs on (`builtin.module`, or `func.func` for the few to nest under it)."""
    from ..ir.bindings import passmanager
    from ..ir.parse import new_context

    found = {}
    with new_context():
        for name in SHARDY_PASSES:
            try:
                passmanager.PassManager.parse(f"builtin.module({name})")
            except ValueError as e:
                if "does not refer to a registered pass" in str(e):
                    continue
                m = _RESTRICTED().search(str(e))
                found[name] = m.group(1) if m else "builtin.module"
                continue
            found[name] = "builtin.module"
    return found
