"""Big inputs (issue 24): `convert` reads a dump a graph at a time and writes each result as it
comes, through one temporary file put in place only when every graph converted; a dump with
many graphs shows `graph N/M` on a terminal. (Peak memory and time on a 300 MB dump are
measured by `make bench`, its "big dump" line.)"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shardy_convert.commands import batch
from shardy_convert.commands.batch import Item, Job
from shardy_convert.converter import ConvertRequest
from shardy_convert.formats import dump

from ..conftest import TESTDATA
from ..helpers import on_a_terminal, run

RETRACE = TESTDATA / "torch_xla" / "linear_retrace.dump"  # 16 graphs
TRAIN = TESTDATA / "torch_xla" / "tp_mlp_train.dump"
BAD = '"{devices=[2,2]0,1,2,2}"'  # device 2 twice


def broken_at(path: Path, index: int, tmp_path: Path) -> tuple[Path, int]:
    """`path` with graph `index`'s first sharding made invalid; (the file, that line)."""
    between, graphs = dump.split(path.read_text())
    bodies = [g.text for g in graphs]
    m = re.search(r'mhlo\.sharding = ("[^"]*")', bodies[index])
    bodies[index] = bodies[index][: m.start(1)] + BAD + bodies[index][m.end(1) :]
    broken = tmp_path / f"broken_{path.name}"
    broken.write_text(dump.join(between, bodies))
    return broken, graphs[index].first_line + bodies[index].count("\n", 0, m.start(1))


def test_a_later_graph_that_fails_leaves_the_output_as_it_was(tmp_path):
    broken, line = broken_at(RETRACE, 15, tmp_path)
    out = tmp_path / "out.dump"
    out.write_text("old")
    result = run("convert", broken, "-o", out)
    assert result.exit_code == 1
    assert f"{broken}:graph 15:{line}:" in result.stderr
    assert "device id 2 is listed twice" in result.stderr
    assert out.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [broken.name, "out.dump"]


def test_a_later_graph_that_fails_prints_nothing_on_stdout(tmp_path):
    broken, _ = broken_at(RETRACE, 12, tmp_path)
    result = run("convert", broken)
    assert result.exit_code == 1
    assert result.stdout == ""


@pytest.mark.parametrize("path", [RETRACE, TRAIN, TESTDATA / "torch_xla" / "hf_mixtral_moe.dump"])
def test_the_streamed_output_is_the_whole_texts(path, tmp_path):
    out = tmp_path / path.name
    result = run("convert", path, "-o", out)
    assert result.exit_code == 0, result.output
    expected, errors = Job(ConvertRequest(validate=True), find_meshes=True).apply(
        path.read_bytes(), str(path)
    )
    assert not errors
    assert out.read_text() == expected


def test_parallel_workers_write_the_same_and_leave_no_temporary_file(tmp_path):
    inputs = [RETRACE, TRAIN, TESTDATA / "torch_xla" / "matmul_2x4.mlir"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert run("convert", *inputs, "-o", one).exit_code == 0
    result = run("convert", *inputs, "-o", two, "--jobs", "2")
    assert result.exit_code == 0, result.output
    for path in inputs:
        assert (two / path.name).read_bytes() == (one / path.name).read_bytes()
    assert sorted(p.name for p in two.iterdir()) == sorted(p.name for p in inputs)


@dataclass
class Spy:
    """A request that writes each graph back as it came and looks, before each, at what the
    output's temporary file holds so far."""

    folder: Path
    emit = None
    seen: list[int] = field(default_factory=list)

    def run(self, module: str) -> str:
        partial = list(self.folder.glob(".out.dump.*.tmp"))
        self.seen.append(partial[0].stat().st_size if partial else -1)
        return module


def test_each_result_is_written_as_it_comes(tmp_path):
    spy = Spy(tmp_path)
    item = Item(str(RETRACE), target=tmp_path / "out.dump")
    outcome = batch.process(Job(spy), item)
    assert not outcome.errors
    assert (tmp_path / "out.dump").read_text() == RETRACE.read_text()
    assert len(spy.seen) == 16
    # before graph k, graphs 0..k-1 are in the temporary file (flushed in 8 KB buffers)
    assert -1 not in spy.seen  # the output was begun before graph 0 converted
    assert spy.seen == sorted(spy.seen)
    assert spy.seen[-1] > len(RETRACE.read_bytes()) // 2
    assert [p.name for p in tmp_path.iterdir()] == ["out.dump"]


def test_a_dump_with_many_graphs_shows_graph_n_of_m_on_a_terminal(tmp_path):
    big = tmp_path / "run.dump.0"
    big.write_text(RETRACE.read_text() * 3)  # 48 graphs
    code, terminal, _ = on_a_terminal(["convert", big, "-o", tmp_path / "out.dump"], "stderr")
    received = terminal.decode(errors="replace")
    assert code == 0, received
    assert "graph 48/48" in received
    assert re.search(r"converting \[#+\] 100%  graph 48/48", received), received


def test_no_progress_off_a_terminal(tmp_path):
    result = run("convert", RETRACE, "-o", tmp_path / "out.dump")
    assert result.exit_code == 0
    assert "graph" not in result.stderr


def test_a_batch_on_a_terminal_shows_the_graphs_of_the_dump_in_hand(tmp_path):
    inputs = [TESTDATA / "torch_xla" / "matmul_2x4.mlir", RETRACE]
    shutil.copy(RETRACE, tmp_path / "copy.dump")
    code, terminal, _ = on_a_terminal(["convert", *inputs, "-o", tmp_path / "out"], "stderr")
    received = terminal.decode(errors="replace")
    assert code == 0, received
    assert re.search(r"1/2  graph 16/16", received), received
