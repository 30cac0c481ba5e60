"""`check` reads each side of a graph once (program.py): what the record holds is what the
separate readers find, and a check parses a graph's text no more than that."""

from __future__ import annotations

import collections
import sys
import warnings

import pytest

from shardy_convert import convert
from shardy_convert.commands.check import program as program_module
from shardy_convert.commands.check.compiled import rematerializations_logged
from shardy_convert.commands.check.draws import input_draws
from shardy_convert.commands.check.partitioner import fallbacks_logged
from shardy_convert.commands.check.program import read_converted, read_original
from shardy_convert.commands.check.reference import unpartitioned
from shardy_convert.commands.check.run import check_inputs, device_count
from shardy_convert.commands.check.signature import main_signature
from shardy_convert.ir import parse
from shardy_convert.passes.pad_uneven import PadUnevenPass

from ...conftest import TESTDATA, real_graph
from ...passes.test_pad_uneven import PROGRAMS


@pytest.mark.parametrize(
    "path", ["torch_xla/matmul_2x4.mlir", "torch_xla/mlp_adamw.dump", "jax/mesh3d.gspmd.mlir"]
)
def test_the_original_record_holds_what_each_reader_finds(path):
    _, graph = real_graph(path)
    original = read_original(graph)
    assert not original.shardy
    assert original.text == graph
    assert original.signature == main_signature(graph)
    assert list(original.draws) == input_draws(graph)
    assert original.reference is not None
    assert original.reference.text == unpartitioned(graph)[0]
    assert original.reference.signature == main_signature(original.reference.text)
    assert read_original(graph, reference=False).reference is None


def test_a_program_without_a_one_device_form_says_why():
    _, graph = real_graph("torch_xla/manual_escape.mlir")
    original = read_original(graph)
    assert (original.reference, original.no_reference) == (None, "manual regions")
    assert unpartitioned(graph) == (None, "manual regions")
    # not asked for: nothing to say
    assert read_original(graph, reference=False).no_reference == ""


def test_the_result_record_holds_its_devices_and_mesh():
    _, graph = real_graph("torch_xla/matmul_2x4.mlir")
    converted = convert(graph, num_devices=8)
    result = read_converted(converted)
    assert result.shardy
    assert result.devices == device_count(converted) == 8
    assert result.mesh is not None
    assert result.mesh.size == 8
    assert result.signature == main_signature(converted)


def test_an_already_shardy_module_is_read_no_further():
    graph = (TESTDATA / "jax" / "mesh3d.shardy.mlir").read_text()
    found = read_original(graph)
    assert found.shardy
    assert (found.reference, found.draws) == (None, ())


def test_the_original_is_read_after_the_passes_that_keep_it_gspmd():
    """pad-uneven runs on the original (both programs then take its padded buffers): the
    record's text and signature are the padded program's."""
    uneven = PROGRAMS["argument_and_result"]  # FSDPv2's [20, 10] weight on 8 devices
    plain = read_original(uneven, reference=False)
    padded = read_original(uneven, reference=False, before=(PadUnevenPass(),))
    assert plain.signature.args[0][0] == (20, 10)
    assert padded.signature.args[0][0] == (24, 10)  # 3 rows a device
    assert padded.signature == main_signature(padded.text)


def test_a_check_parses_each_side_of_a_graph_once(monkeypatch):
    """Check's own modules parse a graph's original once and its result once (program.py);
    the conversion parses its own copy, the divergences a tagged copy, the aliasing only
    where an output differs."""
    calls: collections.Counter = collections.Counter()
    real = parse.parse_module
    rematerializations_logged()  # the once-a-process probes compile their own programs
    fallbacks_logged()

    def counted(data, ctx):
        caller = sys._getframe(1).f_globals["__name__"]
        calls[caller.rsplit(".", 1)[-1]] += 1
        return real(data, ctx)

    prefix = "shardy_convert.commands.check."
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix) and getattr(module, "parse_module", None) is real:
            monkeypatch.setattr(module, "parse_module", counted)
    dump = TESTDATA / "torch_xla" / "mlp_adamw.dump"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        checks = list(check_inputs([str(dump)]))
    graphs = sum(1 for c in checks if c.report is not None)
    assert graphs >= 1
    assert calls[program_module.__name__.rsplit(".", 1)[-1]] == 2 * graphs
    others = {k: v for k, v in calls.items() if k not in ("program", "divergence", "aliasing")}
    assert others == {}, others
