"""The `metadata={...}` attribute of XLA's HloSharding text (`hlo_parser.cc` ParseMetadata):
checked field by field like XLA, kept as the text it was. The converter reads one thing in it:
XLA's V2 spelling of how unreduced axes are reduced, an entry
`{op_type="sdy::reduction_op" op_name="MAX"}` (what XLA's V3ToV2 writes; SUM, MAX or MIN)."""

from __future__ import annotations

import re

from ..model import REDUCTION_OP_TYPE
from .lexer import Cursor, int_list

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)
# OpMetadata fields XLA's ParseMetadata accepts, by the kind of value each takes.
_METADATA_INT = {"source_line", "source_end_line", "source_column", "source_end_column"}
_METADATA_INT |= {"stack_frame_id"}
_METADATA_STR = {"op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name"}
_METADATA_STR |= {"metadata_payload"}
_METADATA_LIST = {"profile_type"}


_REDUCTIONS = {"SUM": "sum", "MAX": "max", "MIN": "min"}


def metadata(cur: Cursor) -> tuple[str, str | None]:
    """`{...}` or `{{...}, {...}}` after `metadata=`: its text, checked, and the reduction an
    `sdy::reduction_op` entry states ("sum", "max", "min"; None when no entry does)."""
    start = cur.skip()
    cur.expect("{", "'{' after 'metadata='")
    entries = _metadata_list(cur) if cur.peek() == "{" else [_metadata_fields(cur)]
    return cur.text[start : cur.pos], _reduction(cur, entries)


def _metadata_list(cur: Cursor) -> list[dict]:
    """`{{op_name="a"}, {op_name="b"}}` with the outer `{` read."""
    entries = []
    while True:
        cur.expect("{", "'{' to start one metadata entry")
        entries.append(_metadata_fields(cur))
        if cur.eat("}"):
            return entries
        cur.expect(",", "',' or '}' in the metadata list")


def _metadata_fields(cur: Cursor) -> dict[str, tuple[int, str]]:
    """`op_name="x" source_line=3, profile_type={1}}` up to and including the closing `}`:
    each field's position and text.

    Fields are separated by spaces or one comma; each may appear once (as in XLA).
    """
    seen: dict[str, tuple[int, str]] = {}
    if cur.eat("}"):
        return seen
    while True:
        pos = cur.skip()
        key = cur.word()
        if key is None or not cur.text.startswith("=", cur.pos):
            raise cur.error("expected a metadata field like op_name=", pos)
        if key in seen:
            raise cur.error(f"metadata field '{key}' is given twice", pos)
        cur.pos += 1
        value_pos = cur.skip()
        _metadata_value(cur, key, pos)
        seen[key] = (value_pos, cur.text[value_pos : cur.pos])
        if cur.eat("}"):
            return seen
        if cur.at_end():
            raise cur.error("expected '}' to end metadata")
        cur.eat(",")


def _reduction(cur: Cursor, entries: list[dict]) -> str | None:
    """The reduction of the entry whose op_type is `sdy::reduction_op`: its op_name, which
    must be SUM, MAX or MIN (XLA silently reads anything else as SUM)."""
    found = None
    for fields in entries:
        if fields.get("op_type", (0, ""))[1][1:-1] != REDUCTION_OP_TYPE:
            continue
        pos, name = fields.get("op_name", (None, '""'))
        if found is not None or name[1:-1] not in _REDUCTIONS:
            what = "a second" if found is not None else f"op_name {name} in an"
            raise cur.error(
                f'{what} "{REDUCTION_OP_TYPE}" metadata entry (the reduction of unreduced '
                "axes: SUM, MAX or MIN, once)",
                pos,
            )
        found = _REDUCTIONS[name[1:-1]]
    return found


def _metadata_value(cur: Cursor, key: str, pos: int) -> None:
    if key in _METADATA_INT:
        cur.integer(f"an integer for metadata field '{key}'")
    elif key in _METADATA_STR:
        _string(cur, key)
    elif key in _METADATA_LIST:
        _int_braces(cur, key)
    else:
        raise cur.error(f"unknown metadata field '{key}'", pos)


def _string(cur: Cursor, key: str) -> None:
    m = _STRING.match(cur.text, cur.skip())
    if m is None:
        raise cur.error(f"expected a quoted string for metadata field '{key}'")
    cur.pos = m.end()


def _int_braces(cur: Cursor, key: str) -> None:
    cur.expect("{", f"'{{' for metadata field '{key}'")
    if cur.eat("}"):
        return
    int_list(cur, f"an integer in metadata field '{key}'")
    cur.expect("}", f"'}}' to end metadata field '{key}'")
