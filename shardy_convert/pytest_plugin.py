"""The package's pytest plugin (the `pytest11` entry point): a failed sharding snapshot
(`shardy_convert.testing.ShardingExtension`) shows `diff`'s located lines in pytest's report.

Loaded by every pytest run where shardy-convert is installed, so it imports nothing until a
test has used the extension: no syrupy, no MLIR (`shardy_convert.testing` is in `sys.modules`
only then).
"""

from __future__ import annotations

import sys

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_assertrepr_compare(config, op, left, right):
    explanations = yield
    testing = sys.modules.get("shardy_convert.testing")
    if testing is None or op != "==":
        return explanations
    return testing.located(explanations, left, right)
