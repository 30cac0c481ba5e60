"""The bracket-nesting guard that runs before MLIR's recursive parser (ir/nesting.check_nesting):
which brackets count (not those in strings or `//` comments, not `->`, `<=`, `>=`), checked
against a plain character-by-character lexer on hand-picked and generated texts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardy_convert.errors import ModuleError
from shardy_convert.ir.nesting import MAX_NESTING, check_nesting


def _deepest(text: str) -> tuple[int, int | None]:
    """The reference: (deepest level, offset where it first exceeds MAX_NESTING), lexing one
    character at a time as MLIR does: strings with backslash escapes, `//` to line end."""
    level = low = deepest = 0
    first = None
    k = 0
    while k < len(text):
        c = text[k]
        if c == '"':
            k += 1
            while k < len(text) and text[k] not in '"\n':
                k += 2 if text[k] == "\\" else 1
        elif text.startswith("//", k):
            while k < len(text) and text[k] != "\n":
                k += 1
            continue
        elif c in "([{<" and not (c == "<" and text[k + 1 : k + 2] == "="):
            level += 1
        elif c in ")]}>" and not (
            (c == ">" and k and text[k - 1] == "-") or (c == ">" and text[k + 1 : k + 2] == "=")
        ):
            level -= 1
            low = min(low, level)
        deepest = max(deepest, level - low)
        if first is None and level - low > MAX_NESTING:
            first = k
        k += 1
    return deepest, first


def _refused_at(text: str) -> int | None:
    try:
        check_nesting(text.encode())
    except ModuleError as e:
        line, column = map(int, e.location.split(":"))
        lines = text.split("\n")
        return sum(len(s) + 1 for s in lines[: line - 1]) + column - 1
    return None


DEEP = "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1)


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        (DEEP, True),
        ('"' + DEEP + '"', False),  # inside a string
        ("// " + DEEP + "\nx", False),  # inside a comment
        ('// a " in a comment\n' + DEEP, True),  # the comment's quote opens no string
        ('// "\n"' + DEEP + '"', False),
        ("a/b/c " + DEEP, True),  # slashes apart: no comment
        ("/" + "/ x " + DEEP, False),  # `//` at the very start
        ('"\\"' + DEEP + '"', False),  # an escaped quote keeps the string open
        ('"\\\\"' + DEEP, True),  # an escaped backslash does not
        ("->" * (MAX_NESTING + 1) + DEEP[:MAX_NESTING], False),
    ],
    ids=[
        "plain",
        "string",
        "comment",
        "quote-in-comment",
        "string-after-comment",
        "slashes-apart",
        "comment-first",
        "escaped-quote",
        "escaped-backslash",
        "arrows",
    ],
)
def test_which_brackets_count(text, refused):
    assert (_refused_at(text) is not None) == refused
    assert _refused_at(text) == _deepest(text)[1]


_PIECES = st.sampled_from(
    [
        "[",
        "]",
        "{",
        "}",
        "<",
        ">",
        "(",
        ")",
        '"',
        "\\",
        "/",
        "//",
        "\n",
        "->",
        "<=",
        ">=",
        "a",
        " ",
        "[" * 64,
        "]" * 64,
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=80))
def test_the_guard_agrees_with_a_character_lexer(pieces):
    # Letters first: no text short enough for the guard's early return, nesting unchanged.
    text = "a" * MAX_NESTING + "".join(pieces)
    assert _refused_at(text) == _deepest(text)[1]
