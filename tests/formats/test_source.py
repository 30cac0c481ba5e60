"""An input read a graph at a time (formats/source.py, window.py; issue 24): a dump's graphs
are handed on as they are read, before the rest of the file, memory holding about one graph;
the pieces are exactly those of the whole-text reader (`dump.split`); text that is no program
is refused at its line and column, also where a chunk's end cuts it."""

from __future__ import annotations

import io

import pytest

from shardy_convert.errors import ModuleError, ShardyConvertError
from shardy_convert.formats import dump
from shardy_convert.formats.source import Source
from shardy_convert.formats.window import Window, text_chunks

from ..conftest import TESTDATA

DUMPS = sorted((TESTDATA / "torch_xla").glob("*.dump"))
RETRACE = TESTDATA / "torch_xla" / "linear_retrace.dump"  # 16 graphs


class Counted(io.BytesIO):
    """A stream that counts the bytes read from it."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.taken = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.taken += len(chunk)
        return chunk


def many_graphs(copies: int) -> str:
    """linear_retrace.dump `copies` times over: a dump of 16 x `copies` graphs."""
    return RETRACE.read_text() * copies


def streamed(text: str, size: int) -> tuple[list[str], list[dump.Graph]]:
    between, graphs = [], []
    chunks = text_chunks(io.BytesIO(text.encode()), size)
    for piece in dump.pieces(Window(chunks)):
        (graphs if isinstance(piece, dump.Graph) else between).append(piece)
    return between, graphs


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
@pytest.mark.parametrize("size", [61, 4096, 1 << 20])
def test_the_streamed_pieces_are_those_of_the_whole_text(path, size):
    text = path.read_text()
    assert streamed(text, size) == dump.split(text)


def test_characters_cut_by_a_chunks_end_come_whole():
    text = RETRACE.read_text().replace("TensorsGraphInfo:", "TensorsGraphInfo: é€😀", 3)
    for size in (7, 8, 9, 10, 11):
        assert streamed(text, size) == dump.split(text)


def test_graphs_are_handed_on_before_the_rest_of_the_file_is_read():
    text = many_graphs(64)  # 1,024 graphs
    stream = Counted(text.encode())
    window = Window(text_chunks(stream, size=1 << 14))
    taken_at, held = [], []
    for piece in dump.pieces(window):
        if isinstance(piece, dump.Graph):
            taken_at.append(stream.taken)
            held.append(len(window.text))
    total = len(text.encode())
    assert len(taken_at) == 1024
    assert taken_at[0] < total / 20  # graph 0 came after a few chunks, not the file
    largest = max(len(g.text) for g in dump.split(RETRACE.read_text())[1])
    assert max(held) < 4 * (largest + (1 << 14))  # about one graph and a chunk held
    assert taken_at == sorted(taken_at)
    assert taken_at[-1] == total


def test_the_survey_counts_graphs_and_devices_as_the_whole_text_reader(tmp_path):
    path = tmp_path / "big.dump"
    path.write_text(many_graphs(8))
    layout = Source(str(path)).survey()
    whole = dump.read(path.read_text())
    assert (layout.graphs, layout.device_count) == (len(whole.graphs), whole.device_count)
    assert layout.is_dump
    assert [g.text for g in Source(str(path)).pieces() if isinstance(g, dump.Graph)] == [
        g.text for g in whole.graphs
    ]


@pytest.mark.parametrize(
    ("data", "where", "why"),
    [
        (b"\0" * 16, "1:1", "it holds a NUL byte"),
        (b"module {\n  func.func @f() {\0", "2:19", "it holds a NUL byte"),
        (b"module {\n}\n" + b"x" * 70_000 + b"\0", "3:70001", "it holds a NUL byte"),
        (b"// \xff\n", "1:4", "byte 3 is not UTF-8"),
        (b"module {\n" + b"a" * 70_000 + b"\xc3(", "2:70001", "byte 70009 is not UTF-8"),
        (b"module {}\n\xe2\x82", "2:1", "byte 10 is not UTF-8"),  # cut at the very end
    ],
    ids=["zeros", "nul-in-a-line", "nul-after-the-head", "not-utf8", "bad-after-the-head", "cut"],
)
@pytest.mark.parametrize("size", [3, 64, 1 << 20])
def test_bytes_no_program_holds_are_refused_where_they_are(data, where, why, size):
    with pytest.raises(ModuleError) as caught:
        list(text_chunks(io.BytesIO(data), size))
    assert caught.value.location == where
    assert caught.value.message.endswith(f"({why})")


def test_the_survey_of_zeros_reads_the_head_only(tmp_path):
    class Zeros(Counted):
        pass

    stream = Zeros(b"\0" * (1 << 24))  # 16 MB
    source = Source("zeros.bin")
    source.open = lambda: stream
    with pytest.raises(ShardyConvertError, match="it holds a NUL byte") as caught:
        source.survey()
    assert stream.taken == 1 << 16
    assert caught.value.describe().startswith("zeros.bin:1:1: error: input is neither MLIR")


def test_a_module_is_one_graph_held_whole(tmp_path):
    path = TESTDATA / "torch_xla" / "matmul_2x4.mlir"
    layout = Source(str(path)).survey()
    assert not layout.is_dump
    assert (layout.graphs, layout.module) == (1, path.read_text())
