"""The converter's output for every testdata input matches its reviewed golden file.

`make golden` rewrites testdata/golden/ from the current converter; review the diff. Goldens
are written by the newest supported jaxlib; older ones print some ops differently, so both
sides are compared through `tests.helpers.comparable_text`.
"""

from __future__ import annotations

import importlib.util
import warnings

import pytest

from shardy_convert.commands.diff import diff
from shardy_convert.ir import compat
from shardy_convert.passes import import_custom_calls
from tests.conftest import TESTDATA
from tests.helpers import comparable_text

_spec = importlib.util.spec_from_file_location("make_golden", TESTDATA / "make_golden.py")
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)


@pytest.mark.parametrize("entry", make_golden.entries(), ids=lambda e: e["path"])
def test_output_matches_golden(entry):
    path = make_golden.golden_path(entry)
    assert path.exists(), f"no golden file {path}; run `make golden`"
    rendered = comparable_text(make_golden.render(entry))
    expected = _in_this_jaxlibs_form(path.read_text())
    assert rendered == comparable_text(expected), f"{path} is stale; run `make golden`"


def _in_this_jaxlibs_form(golden: str) -> str:
    """`make golden` writes with the default venv's jaxlib (0.10.2), whose Shardy compiles a
    program placed whole on one device on its maximal mesh; where this jaxlib needs JAX's
    one-partition form instead (0.11.2 on), the golden is taken through the pass that makes
    it, single-device-program."""
    if "maximal_mesh" not in golden or not compat.single_device_arguments_refused():
        return golden
    from shardy_convert.converter import run_passes
    from shardy_convert.errors import ShardyConvertNote

    with warnings.catch_warnings():  # the pass's result (the device order) comes as a note
        warnings.simplefilter("ignore", ShardyConvertNote)
        return run_passes(golden, ["single-device-program{always=true}"])


def test_golden_outputs_carry_no_gspmd_strings():
    for entry in make_golden.entries():
        path = make_golden.golden_path(entry)
        if path.suffix != ".err":
            assert "mhlo.sharding" not in path.read_text(), path


OK = [e for e in make_golden.entries() if e["expect"] == "ok"]
# torch_xla's inline manual regions and the JAX encoding export-shardings writes are two GSPMD
# spellings of one program that only meet through the converter.
INLINE_MANUAL = {
    "torch_xla/custom_device_ids_manual.dump",
    "torch_xla/custom_device_ids_manual.mlir",
}


@pytest.mark.parametrize("entry", OK, ids=lambda e: e["path"])
def test_golden_places_every_value_as_its_input(entry):
    """A check separate from the text comparison and independent of the converter under
    test: the golden, exported back to GSPMD, places every value (open dims included) as the
    input does, compared as GSPMD without converting the input."""
    original = (TESTDATA / entry["path"]).read_text()
    golden = make_golden.golden_path(entry).read_text()
    convert = entry["path"] in INLINE_MANUAL
    result = diff(original, golden, (entry["path"], "golden"), convert=convert)
    assert result.equal, "\n".join(map(str, result.differences))
    assert result.placements > 0


def test_a_converter_that_drops_open_dims_is_caught(monkeypatch):
    """Both checks catch a converter that closes every `unspecified_dims`; comparing both
    sides through the converter under test (the old check) would not."""
    entry = next(e for e in OK if e["path"] == "jax/shard_map_partial.gspmd.mlir")
    original = (TESTDATA / entry["path"]).read_text()
    monkeypatch.setattr(import_custom_calls, "unspecified_dims", lambda op: frozenset())
    broken = make_golden.render(entry)
    assert broken != make_golden.golden_path(entry).read_text()
    assert diff(original, broken).equal  # blind: the original goes through the same converter
    result = diff(original, broken, convert=False)
    assert not result.equal
    assert all("unspecified_dims" in d.a for d in result.differences), result.differences
