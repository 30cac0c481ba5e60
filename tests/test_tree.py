"""The shape of the tree (issue 11's done-when): modules a newcomer can read whole, and click
only in the command line's own modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = sorted(
    p.relative_to(ROOT).as_posix()
    for folder in ("shardy_convert", "passes")
    for p in (ROOT / folder).rglob("*.py")
)
MAX_LINES = 400


@pytest.mark.parametrize("module", MODULES)
def test_no_module_is_over_400_lines(module):
    """Split by responsibility past this (see sharding/parser*.py, sharding/iota*.py)."""
    lines = (ROOT / module).read_text().count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines"


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("module", [m for m in MODULES if not Path(m).name.startswith("cli")])
def test_click_stays_in_the_command_line(module):
    assert "click" not in _imports(ast.parse((ROOT / module).read_text()))
