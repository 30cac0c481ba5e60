"""match-gspmd-propagation (issue 32): where Shardy's propagation decides a value otherwise than
GSPMD's, GSPMD's decision is pinned, and Shardy then compiles GSPMD's program. Proven on real
torch_xla training steps of testdata/ where Shardy's program costs otherwise: the pinned
conversion compiled with Shardy has GSPMD's collective bytes, temp memory and FLOPs (within 2 %),
and its values are the original's. What each program costs is measured here on jax's own CPU
backend (16 devices: conftest), not through the code under test (xla/)."""

from __future__ import annotations

import re
import warnings

import pytest

from shardy_convert import convert
from shardy_convert.commands.check import compare
from shardy_convert.cpp_stderr import cpp_stderr
from shardy_convert.errors import ShardyConvertWarning
from shardy_convert.ir.legacy_i1 import i1_hex_for_parser
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.passes.match_gspmd_propagation import (
    MatchGspmdPropagationPass,
    PropagationOutcome,
)
from tests.conftest import real_graph
from tests.helpers import needs_op_tags

# (testdata path, graph): real steps whose Shardy program costs more (or otherwise) than
# GSPMD's on jaxlib 0.10.2, 8 devices
FAST = [("torch_xla/matmul_2x4.mlir", 0), ("torch_xla/hf_llama_tp.mlir", 0)]
SLOW = [
    ("torch_xla/hf_llama_tp.dump", 1),  # Shardy 1.15x the collective bytes, 2 remats
    ("torch_xla/resnet18_spatial.dump", 0),  # Shardy 15x the collective bytes
    ("torch_xla/hf_bert_3d.dump", 1),  # Shardy cheaper: pinning gives GSPMD's dearer program
]
_COLLECTIVE = re.compile(
    r"^\s*(?:ROOT\s+)?%\S+\s*=\s*(?P<shape>.+?)\s+"
    r"(?P<op>all-gather|all-reduce|all-to-all|collective-permute|reduce-scatter)(?:-done)?\("
)
_ARRAY = re.compile(r"\b([a-z]+)(\d*)\[([^\]]*)\]")


def _cost(text: str, n: int, *, shardy: bool) -> tuple[int, int, float]:
    """(collective bytes, temp bytes, FLOPs) of one device's program, compiled on jax's CPU
    backend with torch_xla's propagation flags."""
    import numpy as np
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc

    backend = xla_bridge.get_backend("cpu")
    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_partitions, build.num_replicas = n, 1
    build.use_spmd_partitioning, build.use_shardy_partitioner = True, shardy
    build.allow_spmd_sharding_propagation_to_output = [True]
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    with cpp_stderr():
        exe = backend.compile_and_load(
            i1_hex_for_parser(text), xc.DeviceList(tuple(backend.devices()[:n])), options
        )
    hlo = exe.hlo_modules()[0].to_string()
    collective = sum(
        _bytes(m.group("shape")) for line in hlo.splitlines() if (m := _COLLECTIVE.match(line))
    )
    analysis = exe.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list) else analysis
    temp = exe.get_compiled_memory_stats().temp_size_in_bytes
    return collective, temp, float(analysis.get("flops", 0.0))


def _bytes(shape: str) -> int:
    total = 0
    for kind, bits, dims in _ARRAY.findall(shape):
        count = 1
        for d in filter(None, dims.split(",")):
            count *= int(d)
        total += count * (8 if kind == "pred" else int(bits or 0)) // 8
    return total


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 0.02 * max(abs(a), abs(b))


def _pinned(graph: str, n: int) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("error", ShardyConvertWarning)  # every divergence pinned
        return convert(graph, num_devices=n, match_gspmd_propagation=True)


def _proves(path: str, index: int) -> None:
    entry, graph = real_graph(path, index)
    n = entry["num_devices"]
    gspmd = _cost(graph, n, shardy=False)
    shardy = _cost(convert(graph, num_devices=n), n, shardy=True)
    assert shardy != gspmd  # the case: Shardy's own program differs
    pinned = _pinned(graph, n)
    assert all(map(_close, _cost(pinned, n, shardy=True), gspmd))
    assert compare(graph, pinned, n).ok  # the original's values


@needs_op_tags
@pytest.mark.parametrize(("path", "index"), FAST, ids=[p for p, _ in FAST])
def test_pinned_conversion_compiles_to_gspmds_program(path, index):
    _proves(path, index)


@needs_op_tags
@pytest.mark.slow
@pytest.mark.parametrize(("path", "index"), SLOW, ids=[f"{p}:{k}" for p, k in SLOW])
def test_pinned_conversion_compiles_to_gspmds_program_on_whole_steps(path, index):
    _proves(path, index)


def _outcome(text: str, n: int = 8, **options) -> PropagationOutcome:
    with new_context() as ctx:
        module = parse_module(text, ctx)
        return MatchGspmdPropagationPass(num_devices=n, **options).run(module.operation)


@needs_op_tags
def test_pins_only_where_a_divergence_starts():
    """On the README's matmul: the multiply and the maximum start the two chains, the add
    is still Shardy's between them; the last dot follows without a pin, the constant needs
    none."""
    _, graph = real_graph("torch_xla/matmul_2x4.mlir")
    outcome = _outcome(graph)
    assert [p.name for p in outcome.pins] == [
        "stablehlo.multiply",
        "stablehlo.maximum",
        "stablehlo.add",
    ]
    assert outcome.complete
    assert (outcome.remaining, outcome.unpinned) == (0, ())


@needs_op_tags
def test_a_multi_result_op_is_pinned_result_by_result():
    """ResNet-18's batch norms (stablehlo.batch_norm_training/grad: three results each)."""
    entry, graph = real_graph("torch_xla/resnet18_spatial.dump")
    outcome = _outcome(graph, entry["num_devices"])
    norms = [p for p in outcome.pins if p.name.startswith("stablehlo.batch_norm")]
    assert norms
    assert all(p.result == 0 for p in norms)  # the normalized tensor, not mean/variance
    assert outcome.complete


@needs_op_tags
def test_a_module_gspmd_does_not_compile_is_left_as_it_is():
    text = (
        'func.func @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[8]<=[8]}"}) -> '
        "tensor<8xf32> {\n"
        "  %0 = stablehlo.custom_call @no_such_target(%arg0) : (tensor<8xf32>) -> tensor<8xf32>\n"
        "  return %0 : tensor<8xf32>\n}\n"
    )
    outcome = _outcome(text)
    assert outcome.pins == ()
    assert outcome.reason.startswith("GSPMD does not compile it")


@needs_op_tags
def test_the_plugin_wrapper_pins_with_the_programs_own_options():
    """use_plugin(match_gspmd_propagation=True): the wrapper's session converts a program as
    torch_xla hands it (a portable artifact, torch_xla's compile options) with the pins."""
    from shardy_convert.plugin import wrapper
    from shardy_convert.plugin.settings import Settings
    from tests.plugin.test_wrapper import jaxlib_options, portable

    _, graph = real_graph("torch_xla/matmul_2x4.mlir")
    plain = wrapper.Session(Settings(emit="text"))
    pinning = wrapper.Session(Settings(match_gspmd_propagation=True, emit="text"))
    before, *_ = plain.compile(portable(graph), b"mlir", jaxlib_options(8))
    after, *_ = pinning.compile(portable(graph), b"mlir", jaxlib_options(8))
    constraints = before.decode().count("sdy.sharding_constraint")
    assert after.decode().count("sdy.sharding_constraint") > constraints
    assert pinning.counters.boundary_matched == 1  # the boundary is matched too


def test_each_jaxlib_pins_or_says_why_it_cannot():
    """Where the bindings set op locations the README's matmul gets its pins; where they
    cannot (jaxlib 0.7.1), nothing is pinned and the outcome says why."""
    from shardy_convert.ir.compat import op_locations_settable

    _, graph = real_graph("torch_xla/matmul_2x4.mlir")
    outcome = _outcome(graph)
    if op_locations_settable():
        assert outcome.pins
        assert outcome.reason is None
    else:
        assert outcome.pins == ()
        assert "MLIR bindings cannot set an op's location" in outcome.reason


@needs_op_tags
def test_a_pin_the_import_refuses_is_left_out_and_named():
    """Two meshes' shardings with no common Shardy mesh (12 devices, 4x3 and 3x4): GSPMD's
    decision cannot be pinned; the pass keeps the module as the import takes it and says why."""
    entry, graph = real_graph("torch_xla/mixed_meshes_12.mlir")
    outcome = _outcome(graph, entry["num_devices"])
    assert outcome.pins == ()
    assert outcome.unpinned
    assert "no Shardy form here" in outcome.unpinned[0].why
    assert not outcome.complete
