"""The tokens of XLA's HloSharding text (`hlo_lexer.cc`) and a cursor over them for the
parsers (`v1_v2.py`, `v3.py`): whitespace and comments skipped, integers read as int64, quoted
axis names, errors that quote the text and point at the column."""

from __future__ import annotations

import re

from ...errors import ShardingSyntaxError, ShardingValueError, clip
from ..model import Kind

# XLA's lexer skips whitespace, `/* ... */` and `// ...` comments between tokens.
SKIP = re.compile(r"(?:\s+|/\*.*?\*/|//[^\n]*)*", re.S)
INT = re.compile(r"-?[0-9]+(?![A-Za-z0-9_])")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A V3 axis name: single or double quotes (XLA reads both, prints single), no escapes.
QUOTED = re.compile(r"'([^'\\\n]*)'|\"([^\"\\\n]*)\"")

# The keywords that name a sharding's kind.
KINDS = {
    "replicated": Kind.REPLICATED,
    "maximal": Kind.MAXIMAL,
    "manual": Kind.MANUAL,
    "unknown": Kind.UNKNOWN,
    "unreduced": Kind.UNREDUCED,
}


class Cursor:
    """The text and a position; every method skips whitespace and comments first."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def skip(self) -> int:
        self.pos = SKIP.match(self.text, self.pos).end()  # type: ignore[union-attr]  # SKIP matches ''
        return self.pos

    def at_end(self) -> bool:
        return self.skip() >= len(self.text)

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos : self.pos + 1]

    def eat(self, token: str) -> bool:
        if self.text.startswith(token, self.skip()):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str, what: str) -> None:
        if not self.eat(token):
            raise self.error(f"expected {what}")

    def integer(self, what: str = "an integer") -> int:
        m = INT.match(self.text, self.skip())
        if m is None:
            raise self.error(f"expected {what}")
        value = int(m.group())
        if abs(value) >= 2**63:  # XLA's lexer reads int64
            raise self.error(f"{m.group()} does not fit in 64 bits")
        self.pos = m.end()
        return value

    def quoted(self, what: str) -> str:
        """A quoted name (`'data'` or `"data"`), without its quotes."""
        m = QUOTED.match(self.text, self.skip())
        if m is None:
            if self.text.startswith(("'", '"'), self.pos):
                raise self.error(f"{what} must not hold quotes, backslashes or line breaks")
            raise self.error(f"expected {what} in quotes, like 'data'")
        self.pos = m.end()
        return m.group(1) if m.group(1) is not None else m.group(2)

    def word(self) -> str | None:
        m = WORD.match(self.text, self.skip())
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def error(self, message: str, pos: int | None = None) -> ShardingSyntaxError:
        pos = self.pos if pos is None else pos
        return ShardingSyntaxError(message, self.text, pos + 1)

    def value_error(self, message: str, pos: int) -> ShardingValueError:
        """A well-formed but impossible value; quotes the text and names the column too."""
        shown = clip(self.text)
        error = ShardingValueError(f'{message} at column {pos + 1} of "{shown}"')
        error.text, error.column = self.text, pos + 1
        return error


def int_list(cur: Cursor, what: str, limit: int | None = None) -> list[int]:
    """Comma-separated integers; more than `limit` of them is an error (read no further)."""
    start = cur.skip()
    values = [cur.integer(what)]
    while cur.eat(","):
        values.append(cur.integer(what))
        if limit is not None and len(values) > limit:
            raise cur.value_error(f"more than {limit} {what}s", start)
    return values
