"""torch_xla's debug locations, made parseable.

torch_xla traced with `XLA_HLO_DEBUG=1` prints its StableHLO (`xm.get_stablehlo`, the
`XLA_SAVE_TENSORS_FILE` dumps) with MLIR's *pretty* debug-info form, which is for people and
which MLIR's parser refuses ("expected attribute value"): a location is written bare after its
op, without `loc(...)`, and the aliases hold bare file positions and call sites over two lines:

    %0 = stablehlo.dot_general %arg3, %arg2, ... -> tensor<8x8xf32> "aten__mm"(#loc12)
    return %6 : tensor<8x8xf32> [unknown]
    #loc2 = /tmp/model.py:8:0
    #loc17 = #loc9
     at #loc10

`parseable` rewrites them in the form MLIR prints for its parser: `... loc(#sc_loc3)` with
`#sc_loc3 = loc("aten__mm"(#loc12))`, `#loc2 = loc("/tmp/model.py":8:0)`, `#loc17 =
loc(callsite(#loc9 at #loc10))`, every alias after the module (MLIR reads a location alias
only once it is defined, except behind an op's own `loc(#alias)`), every other line where it
was (an alias's line, and a call site's second line, left empty), so errors and the source
lines `check` reports point into the file the user has. Text in the ordinary form is returned
as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import regex

# An alias defined with a bare location: the pretty form (the ordinary form writes `loc(`).
_PRETTY = regex.lazy(r"^#loc\d* = (?!loc\()", re.M)
_ALIAS = regex.lazy(r"^(#loc\d*) = (.*)$")
_STRING = r'"(?:[^"\\]|\\.)*"'
_REF = r"(?:#loc\d*|\[unknown\])"
# A location as it ends an op's line, or follows a (block or func) argument's type.
_SHORT = rf"(?:{_STRING}(?:\({_REF}\))?|{_REF})"
_TRAILING = regex.lazy(rf"(?<=\S) ({_SHORT})$")
_ARGUMENT = regex.lazy(rf"(?<=[}}>\w]) ({_SHORT})(?=,\s|\)\s*(?:->|\{{|:|$))")
_FILE = regex.lazy(r"^(.+):(\d+):(\d+)$")
_OWN = "sc_loc"  # the aliases this reader adds


def is_pretty(text: str) -> bool:
    """Whether `text` defines a location alias in the pretty form; searched from the first
    line that starts with `#loc` (found by a substring search: the regex's own line-by-line
    scan of a big module cost 3% of its conversion)."""
    start = 0 if text.startswith("#loc") else text.find("\n#loc")
    return start >= 0 and _PRETTY().search(text, start) is not None


def parseable(text: str) -> str:
    """`text` with its pretty debug locations in the parser's form (see the module docstring);
    unchanged when it has none."""
    if not is_pretty(text):
        return text
    lines = text.split("\n")
    aliases: list[str] = []
    own: list[str] = []  # after the module's own: theirs may be defined after the module
    alias_line = _ALIAS().match
    for k, line in enumerate(lines):
        if k + 1 < len(lines) and lines[k + 1].startswith(" at "):
            line = f"{line} at {lines[k + 1][4:]}"  # a call site's two lines, as one
            lines[k + 1] = ""
        alias = alias_line(line)
        if alias is not None:  # moved to the end, in order: an alias is defined before use
            aliases.append(f"{alias.group(1)} = loc({_location(alias.group(2))})")
            lines[k] = ""
        elif "loc(" not in line:
            lines[k] = _ops_line(line, own)
    return "\n".join([*lines, *aliases, *own, ""])


def _ops_line(line: str, aliases: list[str]) -> str:
    """An op's (or a signature's) line, each of its locations as `loc(#alias)`: MLIR reads a
    location that refers to an alias only through an alias of its own, where the one it
    refers to may be defined after it."""

    def replaced(m: re.Match) -> str:
        location = _location(m.group(1))
        if location == "unknown" or re.fullmatch(r"#loc\d*", location):
            return f" loc({location})"
        aliases.append(f"#{_OWN}{len(aliases)} = loc({location})")
        return f" loc(#{_OWN}{len(aliases) - 1})"

    return _TRAILING().sub(replaced, _ARGUMENT().sub(replaced, line))


def _location(text: str) -> str:
    """One pretty location in the parser's form (without the `loc(...)` around it)."""
    text = text.strip()
    if text == "[unknown]":
        return "unknown"
    at = _top_level(text, " at ")
    if at is not None:
        return f"callsite({_location(text[:at])} at {_location(text[at + 4 :])})"
    if text.startswith("#loc"):
        return text
    if text.startswith('"'):
        end = re.match(_STRING, text).end()  # type: ignore[union-attr]  # _STRING matches '"'
        name, rest = text[:end], text[end:]
        return name if not rest else f"{name}({_location(rest[1:-1])})"
    if text.startswith("[") and text.endswith("]"):
        return "fused[" + ", ".join(_location(p) for p in _split(text[1:-1])) + "]"
    file = _FILE().match(text)
    if file is not None:
        return f'"{file.group(1)}":{file.group(2)}:{file.group(3)}'
    return "unknown"  # a form this reader does not know: no location, never a wrong one


def _outside(text: str) -> Iterator[int]:
    """The positions of `text` that stand outside quotes and brackets."""
    depth, quoted = 0, False
    for k, ch in enumerate(text):
        if ch == '"' and (k == 0 or text[k - 1] != "\\"):
            quoted = not quoted
        elif not quoted and ch in "([":
            depth += 1
        elif not quoted and ch in ")]":
            depth -= 1
        elif not quoted and depth == 0:
            yield k


def _top_level(text: str, word: str) -> int | None:
    """Where `word` first stands outside quotes and brackets in `text`, None if nowhere."""
    return next((k for k in _outside(text) if text.startswith(word, k)), None)


def _split(text: str) -> list[str]:
    """A fused location's parts: split at its top-level commas."""
    cuts = [k for k in _outside(text) if text[k] == ","]
    parts = [text[a + 1 : b] for a, b in zip([-1, *cuts], [*cuts, len(text)])]
    return [p for p in parts if p.strip()]
