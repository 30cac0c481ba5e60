"""Named (V3) shardings in HLO text and HloModuleProtos, through an XLA that cannot read them.

XLA's importer (`formats.hlo`) reads an HLO program's shardings into `mhlo.sharding` strings.
jaxlib 0.12's XLA reads every named form; 0.10.2's refuses `unreduced=max{...}` and
`single_device[...]` in text and drops the reduction of a proto's named sharding; 0.7.1's
refuses V3 text and reads a proto's named sharding (OpSharding field 14) as `{replicated}`,
silently. So where the XLA does not read them all (`compat.xla_reads_every_named_sharding`),
each named leaf is swapped, before XLA sees it, for its V2 placement marked with a shard group
no program uses (`{devices=[2,4]<=[8] shard_like 7300000000000000}`; XLA keeps shard groups
through its importer), and after the import each marked leaf gets its V3 text back. A proto's
named shardings are read here (`NamedShardingProto`, decoded field by field) into the same
V3 text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from ..errors import ModuleError, ShardyConvertError
from ..ir.bindings import ir
from ..ir.walker import transform_shardings
from ..sharding import HloSharding, Kind, parse
from ..xla import compat
from . import hlo_proto

# Shard group ids from here on mark a hidden named leaf (k-th: BASE + k).
BASE = 7_300_000_000_000_000
_SHARDING = re.compile(r"\bsharding=\{")
# A marked leaf as XLA's importer prints it; `last_tile_dims={...}` is the one inner brace.
_MARKED = re.compile(r"\{(?:[^{}]|\{[^{}]*\})* shard_like (\d+)\}")


@dataclass
class Hidden:
    """The V3 text of each marked leaf, by its shard group id."""

    texts: dict[int, str] = field(default_factory=dict)

    def mark(self, leaf_text: str) -> HloSharding:
        """`leaf_text`'s V2 placement carrying the next marker."""
        v2 = replace(parse(leaf_text).to_v2(), metadata=None, reduction=None)
        marker = BASE + len(self.texts)
        self.texts[marker] = leaf_text
        return replace(v2, shard_group=("shard_like", marker))


def needed() -> bool:
    """Whether this jaxlib's XLA must not see named shardings."""
    return not compat.xla_reads_every_named_sharding()


# --- HLO text ----------------------------------------------------------------------------------


def hide_text(text: str, hidden: Hidden) -> str:
    """`text` with every named leaf of every `sharding={...}` marked (lines kept)."""
    if "mesh[" not in text and "single_device[" not in text:  # no V3: the usual case
        return text
    out, last = [], 0
    for start, end in _sharding_spans(text):
        value = text[start:end]
        if "mesh[" not in value and "single_device[" not in value:
            continue
        out += [text[last:start], _hidden_value(value, hidden, start)]
        last = end
    return "".join([*out, text[last:]]) if out else text


def _hidden_value(value: str, hidden: Hidden, start: int) -> str:
    try:
        sharding = parse(value)
    except ShardyConvertError as e:
        raise ModuleError(f"sharding at character {start}: {e.message}") from None
    if sharding.kind is not Kind.TUPLE:
        return str(hidden.mark(value)) if sharding.named is not None else value
    leaves = [
        str(hidden.mark(str(e))) if e.named is not None else str(e) for e in sharding.elements
    ]
    return "{" + ", ".join(leaves) + "}"


def _sharding_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `sharding={...}` value: balanced braces, quotes skipped."""
    spans = []
    for m in _SHARDING.finditer(text):
        depth, k, quote = 0, m.end() - 1, None
        while k < len(text):
            ch = text[k]
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in "{}":
                depth += 1 if ch == "{" else -1
                if depth == 0:
                    spans.append((m.end() - 1, k + 1))
                    break
            k += 1
    return spans


# --- HloModuleProto ----------------------------------------------------------------------------


def hide_proto(module: bytes, hidden: Hidden) -> bytes:
    """The HloModuleProto with every named OpSharding marked (a V2 OpSharding)."""
    if not hlo_proto.may_hold_named(module):
        return module
    return hlo_proto.rewrite_shardings(module, lambda op: _hidden_op(op, hidden))


def _hidden_op(op: bytes, hidden: Hidden) -> bytes | None:
    """A marked V2 OpSharding for a named one (or a tuple holding some); None: unchanged."""
    text = hlo_proto.named_text(op)
    if text is not None:
        return hlo_proto.encode_sharding(hidden.mark(text))
    elements = hlo_proto.tuple_elements(op)
    if not any(hlo_proto.named_text(e) is not None for e in elements):
        return None
    new = [_hidden_op(e, hidden) or e for e in elements]
    return hlo_proto.encode_tuple(new)


# --- back ------------------------------------------------------------------------------------


def restore(module: ir.Module, hidden: Hidden) -> None:
    """Every marked leaf of the imported module's `mhlo.sharding` strings gets its V3 text."""
    if not hidden.texts:
        return

    def back(text: str, _site) -> str:
        return _MARKED.sub(lambda m: hidden.texts.get(int(m.group(1)), m.group(0)), text)

    transform_shardings(module.operation, back)
