"""`check --pad-uneven` and `convert --pad-uneven`: a [20, 10] value split 8 ways compiles to
another program as it is (Shardy shards it 4 ways, GSPMD pads it 8 ways), and to the same
program once both sides take GSPMD's padded [24, 10]."""

from __future__ import annotations

import pytest

from ..helpers import run, said_same

UNEVEN = (
    'func.func @main(%arg0: tensor<20x10xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}) '
    "-> tensor<20x10xf32> {\n"
    "  %0 = stablehlo.negate %arg0 : tensor<20x10xf32>\n"
    "  return %0 : tensor<20x10xf32>\n}\n"
)


@pytest.mark.slow
def test_check_pad_uneven_compares_the_programs_that_take_gspmds_buffers(tmp_path):
    path = tmp_path / "uneven.mlir"
    path.write_text(UNEVEN)
    as_it_is = run("check", "--devices", "8", path)
    assert f"{path}: conversion differs" in as_it_is.stdout, as_it_is.output
    assert "convert --pad-uneven" in as_it_is.stderr
    padded = run("check", "--devices", "8", "--pad-uneven", path)
    assert padded.exit_code == 0, padded.output
    assert said_same(padded.stdout, path, "1 parameter, 1 output on 8 devices"), padded.stdout


def test_convert_pad_uneven_gives_the_padded_shape(tmp_path):
    path = tmp_path / "uneven.mlir"
    path.write_text(UNEVEN)
    refused = run("convert", "--strict", path)
    assert refused.exit_code == 1
    assert "dim 0 of size 20 is split 8 ways" in refused.stderr
    result = run("convert", "--strict", "--pad-uneven", path)
    assert result.exit_code == 0, result.output
    assert "%arg0: tensor<24x10xf32>" in result.stdout
    assert "stablehlo.slice %arg0 [0:20, 0:10]" in result.stdout
