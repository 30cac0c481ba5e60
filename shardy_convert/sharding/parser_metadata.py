"""The `metadata={...}` attribute of XLA's HloSharding text (`hlo_parser.cc` ParseMetadata):
checked field by field like XLA, kept as the text it was (the converter never reads it)."""

from __future__ import annotations

import re

from .parser_lexer import Cursor, int_list

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)
# OpMetadata fields XLA's ParseMetadata accepts, by the kind of value each takes.
_METADATA_INT = {"source_line", "source_end_line", "source_column", "source_end_column"}
_METADATA_INT |= {"stack_frame_id"}
_METADATA_STR = {"op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name"}
_METADATA_STR |= {"metadata_payload"}
_METADATA_LIST = {"profile_type"}


def metadata(cur: Cursor) -> str:
    """`{...}` or `{{...}, {...}}` after `metadata=`: its text, checked."""
    start = cur.skip()
    cur.expect("{", "'{' after 'metadata='")
    if cur.peek() == "{":
        _metadata_list(cur)
    else:
        _metadata_fields(cur)
    return cur.text[start : cur.pos]


def _metadata_list(cur: Cursor) -> None:
    """`{{op_name="a"}, {op_name="b"}}` with the outer `{` read."""
    while True:
        cur.expect("{", "'{' to start one metadata entry")
        _metadata_fields(cur)
        if cur.eat("}"):
            return
        cur.expect(",", "',' or '}' in the metadata list")


def _metadata_fields(cur: Cursor) -> None:
    """`op_name="x" source_line=3, profile_type={1}}` up to and including the closing `}`.

    Fields are separated by spaces or one comma; each may appear once (as in XLA).
    """
    seen: set[str] = set()
    if cur.eat("}"):
        return
    while True:
        pos = cur.skip()
        key = cur.word()
        if key is None or not cur.text.startswith("=", cur.pos):
            raise cur.error("expected a metadata field like op_name=", pos)
        if key in seen:
            raise cur.error(f"metadata field '{key}' is given twice", pos)
        seen.add(key)
        cur.pos += 1
        _metadata_value(cur, key, pos)
        if cur.eat("}"):
            return
        if cur.at_end():
            raise cur.error("expected '}' to end metadata")
        cur.eat(",")


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
