"""`--version`'s supported range: every part of a version counts (0.12.0.1 is a post release of
0.12.0), and the range is pyproject.toml's (tests/cli/test_main.py checks the line itself)."""

from __future__ import annotations

import pytest

from shardy_convert.cli.version import SUPPORTED, _within


@pytest.mark.parametrize(
    ("version", "inside"),
    [
        ("0.7.1", True),
        ("0.10.2", True),
        ("0.11.2", True),
        ("0.12.0", True),
        ("0.12.0.1", True),
        ("0.7.0", False),
        ("0.12.0.2", False),
        ("0.12.1", False),
        ("0.13.0.dev20261101", False),
        ("(not installed)", False),
    ],
)
def test_within_the_supported_range(version, inside):
    assert SUPPORTED == ("0.7.1", "0.12.0.1")
    assert _within(version, *SUPPORTED) is inside
