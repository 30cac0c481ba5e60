"""torch_xla dump files: split/join, located errors, and the device count across graphs."""

from __future__ import annotations

import re
import warnings

import pytest

from shardy_convert.commands.batch import Job
from shardy_convert.converter import ConvertRequest
from shardy_convert.errors import DumpError, ShardyConvertWarning
from shardy_convert.formats import dump
from tests.conftest import TESTDATA

DUMPS = sorted((TESTDATA / "torch_xla").glob("*.dump"))


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_split_then_join_gives_the_dump_back(path):
    text = path.read_text()
    between, graphs = dump.split(text)
    assert len(between) == len(graphs) + 1
    assert dump.join(between, [g.text for g in graphs]) == text
    for g in graphs:
        assert g.text.lstrip().startswith("module")
        assert text.splitlines()[g.first_line - 1] == g.text.splitlines()[0]


def test_dump_without_graphs_is_an_error():
    with pytest.raises(DumpError, match="no ## BEGIN_GRAPH"):
        dump.split("[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n")


def test_truncated_dump_names_the_graph_and_line():
    text = (TESTDATA / "torch_xla" / "linear_retrace.dump").read_text()
    cut = text[: text.index(dump.END, text.index(dump.BEGIN, 2000))]
    with pytest.raises(DumpError, match=r"graph \d+ starting at line \d+ has no ## END_GRAPH"):
        dump.split(cut)


def test_replicated_graph_takes_the_device_count_of_the_other_graphs():
    text = (TESTDATA / "torch_xla" / "matmul_2x4.dump").read_text()
    graph = dump.graphs(text)[0].text
    replicated = re.sub(r'mhlo\.sharding = "[^"]*"', 'mhlo.sharding = "{replicated}"', graph)
    two = text + text.replace(graph, replicated)
    assert dump.device_count(two) == 8
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShardyConvertWarning)
        out = Job(ConvertRequest()).apply(two.encode(), "two.dump")[0]
    meshes = re.findall(r"sdy\.mesh @mesh = <\[[^\]]*\]>", out)
    assert meshes == [
        'sdy.mesh @mesh = <["_axis_0"=2, "_axis_1"=4]>',
        'sdy.mesh @mesh = <["_axis_0"=8]>',
    ]


def test_graph_with_no_device_count_anywhere_warns():
    text = (TESTDATA / "torch_xla" / "matmul_2x4.dump").read_text()
    replicated = re.sub(r'mhlo\.sharding = "[^"]*"', 'mhlo.sharding = "{replicated}"', text)
    with pytest.warns(ShardyConvertWarning, match="how many devices"):
        Job(ConvertRequest()).apply(replicated.encode(), "replicated.dump")
