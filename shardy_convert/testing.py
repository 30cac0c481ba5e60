"""Golden files of sharded programs in pytest: syrupy 7 snapshot extensions that compare by
placement, as `shardy-convert diff` does (`pip install 'shardy-convert[testing]'`).

    from shardy_convert.testing import ShardingExtension

    def test_matmul(snapshot):
        assert module_text == snapshot(extension_class=ShardingExtension)

`pytest --snapshot-update` writes the module (GSPMD or Shardy text, or a torch_xla dump of
several graphs) to `__snapshots__/<test file>/<test>.mlir`; later runs compare with it graph by
graph and placement by placement (commands/golden.py): a respelled placement passes, a moved
tile fails with `diff`'s located lines, `FILE:LINE:COL: arg 2 of @main: ... devices differ at
2 of 8 tiles: ...`. `AuditExtension` does the same for a sharding audit report (JSON, tensor by
tensor) in a `.json` file.

Where the failure shows: syrupy asks the extension of the assertion for its diff lines, but
`snapshot(extension_class=...)` only lends the extension for the comparison; the message is
then written by the fixture's default extension (measured on syrupy 7.0.2), a text diff of the
two modules. The package's pytest plugin (`shardy_convert.pytest_plugin`, loaded by pytest
through the `pytest11` entry point wherever shardy-convert is installed) puts the located
lines in place of that text diff; `snapshot.use_extension(ShardingExtension)` keeps the
extension without it, and `pytest_plugins = ["shardy_convert.testing"]` in a conftest.py does
what the plugin does where entry points are disabled (`PYTEST_DISABLE_PLUGIN_AUTOLOAD`).
Either way `--snapshot-update` rewrites a golden file only when it differs.

Importing this module needs syrupy (and pytest) but no MLIR: the comparison imports it when it
first runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from .errors import ShardyConvertError
from .lru import LRU

__all__ = ["AuditExtension", "ShardingExtension", "located", "pytest_assertrepr_compare"]

RECEIVED = "received"
# The lines of the comparisons that failed last, by (golden, received) text: what the plugin
# hook shows for an assertion whose message syrupy gives to another extension.
_FAILED: LRU[tuple[str, str], list[str]] = LRU(8)


class ShardingExtension(SingleFileSnapshotExtension):
    """A module or torch_xla dump (text) as a `.mlir` golden file, compared by placement."""

    file_extension = "mlir"
    _write_mode = WriteMode.TEXT

    def serialize(self, data, **kwargs) -> str:
        """The text as given (bytes as UTF-8): the golden file is what the test produced."""
        if isinstance(data, bytes):
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise TypeError(
                    f"{type(self).__name__} keeps text: print a bytecode module first"
                ) from None
        if not isinstance(data, str):
            raise TypeError(f"{type(self).__name__} keeps text, not {type(data).__name__}")
        return data

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> str | None:
        self._golden = _shown_path(snapshot_location)
        return super().read_snapshot_data_from_location(
            snapshot_location=snapshot_location, snapshot_name=snapshot_name, session_id=session_id
        )

    def matches(self, *, serialized_data, snapshot_data) -> bool:
        """Equal placements (and structure), as `diff` decides. A golden file that cannot be
        read is a mismatch (`--snapshot-update` rewrites it); what the test produced that
        cannot be read is an error."""
        from .commands.golden import compare, report_lines

        golden = getattr(self, "_golden", "golden")
        try:
            result = compare(snapshot_data, serialized_data, (golden, RECEIVED))
        except ShardyConvertError as e:
            if e.file != golden:
                raise
            lines = [e.describe()]
        else:
            if result.equal:
                return True
            lines = report_lines(result)
        _FAILED.put((snapshot_data, serialized_data), lines)
        return False

    def diff_lines(self, serialized_data, snapshot_data) -> Iterator[str]:
        """The located differences `matches` found (a text diff when it never compared)."""
        lines = _FAILED.peek((str(snapshot_data), str(serialized_data)))
        if lines is None:
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        yield from lines


class AuditExtension(ShardingExtension):
    """A sharding audit report (`shardy_convert.torch_xla.audit(...).to_json()`) as a `.json`
    golden file, compared tensor by tensor."""

    file_extension = "json"


@pytest.hookimpl(wrapper=True)
def pytest_assertrepr_compare(config, op, left, right):
    """For `snapshot(extension_class=ShardingExtension)`: the located lines in place of the
    text diff syrupy's default extension wrote (when this module is a loaded plugin)."""
    explanations = yield
    return located(explanations, left, right)


def located(explanations, left, right):
    """`explanations` (what pytest's other hooks said of a failed `==`) with the located lines
    of the last failed comparison of a sharding snapshot in place of syrupy's text diff;
    unchanged when the assertion is no such snapshot's, or already shows them."""
    result = _last_result(left) or _last_result(right)
    if result is None or not explanations or not explanations[0]:
        return explanations
    golden, received = result.recalled_data, result.asserted_data
    lines = _FAILED.peek((str(golden), str(received))) if golden is not None else None
    if lines is None or lines[-1] in explanations[0]:
        return explanations
    return [[explanations[0][0], *lines], *explanations[1:]]


def _last_result(side):
    """The last assertion of a syrupy `SnapshotAssertion`, None for anything else."""
    executions = getattr(side, "executions", None)
    if not isinstance(executions, dict) or not executions:
        return None
    return executions.get(side.num_executions - 1)


def _shown_path(path: str) -> str:
    """The golden file as a failure names it: relative to the working directory when inside."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative
