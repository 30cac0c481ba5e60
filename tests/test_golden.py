"""The converter's output for every testdata input matches its reviewed golden file.

`make golden` rewrites testdata/golden/ from the current converter; review the diff.
"""

from __future__ import annotations

import importlib.util

import pytest

from .conftest import TESTDATA

_spec = importlib.util.spec_from_file_location("make_golden", TESTDATA / "make_golden.py")
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)


@pytest.mark.parametrize("entry", make_golden.entries(), ids=lambda e: e["path"])
def test_output_matches_golden(entry):
    path = make_golden.golden_path(entry)
    assert path.exists(), f"no golden file {path}; run `make golden`"
    assert make_golden.render(entry) == path.read_text(), f"{path} is stale; run `make golden`"


def test_golden_outputs_carry_no_gspmd_strings():
    for entry in make_golden.entries():
        path = make_golden.golden_path(entry)
        if path.suffix != ".err":
            assert "mhlo.sharding" not in path.read_text(), path


@pytest.mark.parametrize(
    "entry", [e for e in make_golden.entries() if e["expect"] == "ok"], ids=lambda e: e["path"]
)
def test_golden_says_the_same_as_its_input(entry):
    """`shardy-convert diff INPUT GOLDEN`: the golden places every value as the input does."""
    from shardy_convert.diff import diff

    original = (TESTDATA / entry["path"]).read_text()
    golden = make_golden.golden_path(entry).read_text()
    result = diff(original, golden, (entry["path"], "golden"))
    assert result.equal, "\n".join(map(str, result.differences))
