"""regex.lazy: a pattern compiled on its first use, the same compiled object after."""

from __future__ import annotations

import re

from shardy_convert import regex


def test_compiles_on_first_call_only(monkeypatch):
    made = []
    real = re.compile

    def counting(pattern, flags=0):
        made.append(pattern)
        return real(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    pattern = regex.lazy(r"^#loc(\d*) = ", re.M)
    assert made == []  # nothing compiled by defining it
    first = pattern()
    assert pattern() is first
    assert made == [r"^#loc(\d*) = "]
    assert first.flags & re.M
    assert first.search("x\n#loc12 = loc(unknown)").group(1) == "12"


def test_bytes_patterns_stay_bytes():
    pattern = regex.lazy(rb"loc\(")
    assert pattern().search(b'"a" loc("x")') is not None
    assert pattern().pattern == rb"loc\("
