"""The error hierarchy and its one boundary: errors and warnings are located alike, and only
the command line's group (and `describe`, which it and the batch commands share) words them."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import shardy_convert
from shardy_convert.errors import (
    Located,
    ModuleError,
    ShardingValueError,
    ShardyConvertError,
    ShardyConvertWarning,
    clip,
)
from shardy_convert.formats import module as formats

PACKAGE = Path(shardy_convert.__file__).parent


@pytest.mark.parametrize(
    ("where", "prefix"),
    [
        ({}, ""),
        ({"file": "m.mlir"}, "m.mlir: "),
        ({"file": "d.0", "graph": 2, "location": "3:5"}, "d.0:graph 2:3:5: "),
        ({"location": "arg 0 of @main"}, "arg 0 of @main: "),
    ],
)
def test_errors_and_warnings_are_located_by_one_base(where, prefix):
    error = ShardingValueError("bad", **where)
    warning = ShardyConvertWarning("guessed", **where)
    assert isinstance(error, Located)
    assert isinstance(warning, Located)
    assert error.describe() == f"{prefix}error: bad"
    assert str(error) == f"{prefix}bad"  # a traceback: `ShardingValueError: m.mlir: bad`
    assert warning.describe() == f"{prefix}warning: guessed"


def test_located_fills_only_what_is_unknown_and_keeps_the_class():
    warning = ShardyConvertWarning("w", location="1:2").located(location="9:9", file="f", graph=0)
    assert type(warning) is ShardyConvertWarning
    assert warning.describe() == "f:graph 0:1:2: warning: w"


def _handlers_that_echo(tree: ast.AST):
    """`except` clauses that print with click.echo something other than `describe(...)`."""
    for handler in ast.walk(tree):
        if not isinstance(handler, ast.ExceptHandler):
            continue
        for call in ast.walk(handler):
            if not (isinstance(call, ast.Call) and ast.unparse(call.func) == "click.echo"):
                continue
            arg = call.args[0] if call.args else None
            if not (isinstance(arg, ast.Call) and ast.unparse(arg.func) == "describe"):
                yield handler.lineno


@pytest.mark.parametrize("module", sorted(p.name for p in (PACKAGE / "cli").glob("*.py")))
def test_commands_leave_error_wording_to_the_boundary(module):
    """A command that catches an error re-raises it located (the group prints it) or prints
    it through `describe`; none words an error itself."""
    tree = ast.parse((PACKAGE / "cli" / module).read_text())
    assert list(_handlers_that_echo(tree)) == []


def _child_report(monkeypatch, error: Exception) -> subprocess.CompletedProcess:
    """What the bytecode reader's child process writes when reading raises `error`."""

    def fail(data, ctx):
        raise error

    monkeypatch.setattr(formats, "_load_in_process", fail)
    out = io.BytesIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"ML\xefR")))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, write_through=True))
    with pytest.raises(SystemExit) as exit_:
        formats._isolated_main()
    assert exit_.value.code == 1
    json.loads(out.getvalue())  # data, not words
    return subprocess.CompletedProcess([], 1, out.getvalue(), b"")


def test_bytecode_child_reports_our_error_as_data_the_parent_raises(monkeypatch):
    child = _child_report(monkeypatch, ModuleError("no such op", location="4:2"))
    with pytest.raises(ModuleError) as raised:
        formats._child_error(child)
    assert raised.value.describe() == "4:2: error: no such op"


def test_bytecode_child_reports_a_foreign_exception_by_its_type(monkeypatch):
    child = _child_report(monkeypatch, RuntimeError("bad artifact"))
    with pytest.raises(ShardyConvertError) as raised:
        formats._child_error(child)
    assert str(raised.value) == "cannot read the bytecode: RuntimeError: bad artifact"


@pytest.mark.parametrize(
    ("value", "limit", "quoted"),
    [("short", 120, "short"), ("x" * 130, 120, "x" * 117 + "..."), (12345, 4, "1...")],
)
def test_messages_quote_input_clipped_in_one_way(value, limit, quoted):
    assert clip(value, limit) == quoted
