"""An input that does not exist, where torch_xla wrote it under another name (issue 24):
`XLA_SAVE_TENSORS_FILE=run.dump` makes torch_xla write `run.dump.0` (the process index
added), and every command that reads inputs says so in its usage error."""

from __future__ import annotations

import shutil

import pytest

from shardy_convert.cli.params import process_files

from ..conftest import TESTDATA
from ..helpers import run

DUMP = TESTDATA / "torch_xla" / "matmul_2x4.dump"
HINT = "run.dump does not exist; did you mean run.dump.0 (torch_xla adds the process index)?"


@pytest.fixture
def numbered(tmp_path, monkeypatch):
    """A folder holding what torch_xla wrote for XLA_SAVE_TENSORS_FILE=run.dump: run.dump.0."""
    shutil.copy(DUMP, tmp_path / "run.dump.0")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [["convert"], ["v2"], ["to-gspmd"], ["inspect"], ["check"], ["opt", "--passes", "v1-to-v2"]],
    ids=lambda a: a[0],
)
def test_every_command_names_torch_xlas_numbered_file(numbered, args):
    result = run(*args, "run.dump")
    assert result.exit_code == 2, result.output
    assert HINT in result.output


def test_diff_names_it_for_either_input(numbered):
    result = run("diff", "run.dump.0", "run.dump")
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '[B]': {HINT}" in result.output


def test_a_file_per_process_names_the_first_and_the_others(numbered):
    for k in (1, 2, 10):
        shutil.copy(DUMP, numbered / f"run.dump.{k}")
    result = run("convert", numbered / "run.dump")
    assert result.exit_code == 2, result.output
    assert (
        f"{numbered}/run.dump does not exist; did you mean {numbered}/run.dump.0 (torch_xla adds "
        f"the process index; also {numbered}/run.dump.1, {numbered}/run.dump.2, "
        f"{numbered}/run.dump.10)?"
    ) in " ".join(result.output.split())


def test_a_missing_input_with_no_numbered_file_is_clicks_own_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.dump.x").write_text("")
    (tmp_path / "other.dump.0").write_text("")
    result = run("convert", "run.dump")
    assert result.exit_code == 2, result.output
    assert "Path 'run.dump' does not exist." in result.output
    assert process_files("run.dump") == []
    assert process_files("missing/run.dump") == []
