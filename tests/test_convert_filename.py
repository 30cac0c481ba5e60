"""`convert(text, filename=...)`: the library's errors and warnings name the file as the command
line does (issue 24: the README promised `str(e)` reads `model.mlir:1:17: ...`, `convert(text)`
gave `1:17: ...`, having no file to name)."""

from __future__ import annotations

import warnings

import pytest

from shardy_convert import ShardyConvertError, ShardyConvertWarning, convert

from .conftest import TESTDATA
from .helpers import run

MODEL = (  # the README's model.mlir
    'func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,2]0,1,2,2}"}) '
    "-> tensor<8x8xf32> {\n  return %arg0 : tensor<8x8xf32>\n}\n"
)
UNEVEN = TESTDATA.parent / "examples" / "uneven.mlir"


def test_an_error_names_the_file_as_the_command_line_prints_it(tmp_path, monkeypatch):
    with pytest.raises(ShardyConvertError) as caught:
        convert(MODEL, filename="model.mlir")
    error = caught.value
    assert str(error) == (
        "model.mlir:1:17: arg 0 of @main: device id 2 is listed twice at column 21 of "
        '"{devices=[2,2]0,1,2,2}"'
    )
    assert (error.file, error.location) == ("model.mlir", "1:17: arg 0 of @main")

    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.mlir").write_text(MODEL)
    cli = run("convert", "model.mlir")
    assert cli.exit_code == 1
    assert cli.stderr == error.describe() + "\n"
    assert error.describe() == str(error).replace("of @main: ", "of @main: error: ", 1)


def test_without_a_filename_the_location_starts_at_the_line():
    with pytest.raises(ShardyConvertError) as caught:
        convert(MODEL)
    assert str(caught.value).startswith("1:17: arg 0 of @main: device id 2 is listed twice")
    assert caught.value.file is None


def test_warnings_name_the_file_and_reach_the_callers_filters_once_each():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convert(UNEVEN.read_text(), filename="uneven.mlir")
    (warning,) = caught
    assert warning.category is ShardyConvertWarning
    assert warning.message.describe().startswith(
        "uneven.mlir:2:19: arg 0 of @main: warning: dim 0 of size 1 is split 8 ways"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShardyConvertWarning)
        with pytest.raises(ShardyConvertWarning, match="split 8 ways"):
            convert(UNEVEN.read_text(), filename="uneven.mlir")
