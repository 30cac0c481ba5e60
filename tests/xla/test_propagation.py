"""xla/propagation.py: each partitioner's decisions after propagation, read from XLA's dump of
a real compile (testdata/torch_xla/matmul_2x4.mlir, converted for Shardy's side)."""

from __future__ import annotations

import pytest

from shardy_convert import convert
from shardy_convert.formats.propagated_hlo import instructions
from shardy_convert.xla.options import compile_options
from shardy_convert.xla.propagation import compile_propagated
from tests.conftest import TESTDATA

MATMUL = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()


@pytest.mark.parametrize("shardy", [False, True], ids=["GSPMD", "Shardy"])
def test_the_module_after_propagation_has_a_sharding_on_every_parameter(shardy):
    program = convert(MATMUL, num_devices=8) if shardy else MATMUL
    options = compile_options(8, shardy=shardy, optimize=False)
    found = compile_propagated(program, 8, options, shardy=shardy)
    assert found.hlo.startswith("HloModule ")
    parameters = [i for i in instructions(found.hlo) if i.opcode == "parameter"]
    assert len(parameters) == 4
    assert all(p.sharding for p in parameters)
    assert found.compiled.parameters is not None  # the program itself, compiled as asked


def test_the_dump_is_read_and_removed(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    options = compile_options(8, shardy=False, optimize=False)
    assert compile_propagated(MATMUL, 8, options, shardy=False).hlo
    assert list(tmp_path.iterdir()) == []  # nothing of XLA's dump left behind
