"""match-gspmd-boundary: GSPMD's shardings for @main's open values, read from GSPMD's compile on
jaxlib's CPU client and pinned before conversion (issue 17). Each test compiles for itself what
it compares against: the GSPMD original with torch_xla's compile options (propagation to the
output on), built here and compiled on jax's own CPU backend, not through the code under test
(xla/)."""

from __future__ import annotations

import warnings

import pytest

from shardy_convert import convert
from shardy_convert.cpp_stderr import cpp_stderr
from shardy_convert.errors import ShardyConvertError, ShardyConvertWarning
from shardy_convert.formats import boundary_cache as boundary_module
from shardy_convert.formats.boundary_cache import Boundary, gspmd_boundary
from shardy_convert.ir.bindings import ir
from shardy_convert.ir.legacy_i1 import i1_hex_for_parser
from shardy_convert.ir.parse import new_context, parse_module
from shardy_convert.ir.walker import func_name, funcs
from shardy_convert.lru import LRU
from shardy_convert.passes.match_gspmd_boundary import BoundaryOutcome, _unpinnable
from shardy_convert.plugin import wrapper
from shardy_convert.plugin.settings import Settings
from shardy_convert.sharding import parse
from tests.conftest import TESTDATA

GRAPHS = ["tp_mlp_train.mlir", "hf_gpt2_2d.mlir"]
# Real graphs whose outputs Shardy's propagation shards otherwise than GSPMD's (the matmul
# notebook's output; the 12-device graph of two meshes: all 3 outputs on jaxlib 0.10.2).
UNLIKE = [("matmul_2x4.mlir", 8), ("mixed_meshes_12.mlir", 12)]


def _compile(text: str, n: int, *, shardy: bool, opt_level: int | None = None):
    """(parameter shardings, output shardings) as GSPMD strings of one compile on jax's CPU
    backend (16 devices: conftest), with torch_xla's propagation flags."""
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
    if opt_level is not None:
        build.debug_options.xla_backend_optimization_level = opt_level
    with cpp_stderr():
        exe = backend.compile_and_load(
            i1_hex_for_parser(text), xc.DeviceList(tuple(backend.devices()[:n])), options
        )
    strings = [
        [str(xc.HloSharding.from_proto(p)) for p in protos]
        for protos in (exe.get_parameter_shardings(), exe.get_output_shardings())
    ]
    return tuple(strings)


def _same(a: list[str], b: list[str]) -> bool:
    return len(a) == len(b) and all(parse(x) == parse(y) for x, y in zip(a, b))


def _result_attrs(text: str) -> list[str]:
    with new_context() as ctx:
        module = parse_module(text, ctx)  # held: @main is an op inside it (jaxlib 0.7.1 frees it)
        main = next(f for f in funcs(module.operation) if func_name(f) == "main")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        count = len(ftype.results)
        if "res_attrs" not in main.attributes:
            return ["{}"] * count
        return [str(d) for d in main.attributes["res_attrs"]]


@pytest.mark.parametrize(("name", "devices"), UNLIKE + [(g, 8) for g in GRAPHS])
def test_the_shardy_program_returns_what_gspmd_returns(name, devices):
    text = (TESTDATA / "torch_xla" / name).read_text()
    gspmd_parameters, gspmd_outputs = _compile(text, devices, shardy=False)
    matched = convert(text, match_gspmd_boundary=True)
    assert all("sdy.sharding" in attrs for attrs in _result_attrs(matched))  # none left open
    parameters, outputs = _compile(matched, devices, shardy=True)
    assert _same(parameters, gspmd_parameters)
    assert _same(outputs, gspmd_outputs)


# jaxlib 0.7.1's Shardy happens to shard the 12-device graph's outputs as GSPMD does.
@pytest.mark.parametrize(("name", "devices"), UNLIKE[:1])
def test_without_the_option_shardy_returns_other_shardings(name, devices):
    text = (TESTDATA / "torch_xla" / name).read_text()
    gspmd_outputs = _compile(text, devices, shardy=False)[1]
    outputs = _compile(convert(text), devices, shardy=True)[1]
    assert not _same(outputs, gspmd_outputs)


def test_without_the_option_torch_xlas_outputs_stay_open():
    text = (TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text()
    assert all("sdy.sharding" not in attrs for attrs in _result_attrs(convert(text)))


@pytest.mark.parametrize("name", GRAPHS)
def test_llvm_at_level_0_leaves_gspmds_choices_as_they_are(name):
    # gspmd_boundary compiles at optimization level 0: sharding propagation and the SPMD
    # partitioner run on HLO, before LLVM.
    text = (TESTDATA / "torch_xla" / name).read_text()
    fast = _compile(text, 8, shardy=False, opt_level=0)
    default = _compile(text, 8, shardy=False)
    assert all(_same(a, b) for a, b in zip(fast, default))
    ours = gspmd_boundary(i1_hex_for_parser(text), 8)
    assert _same(list(ours.parameters), default[0])
    assert _same(list(ours.outputs), default[1])


def _fresh_process(monkeypatch) -> None:
    """GSPMD's choices remembered by this process forgotten, as in a new process."""
    monkeypatch.setattr(boundary_module, "_cache", LRU(boundary_module._cache.size))


def test_choices_are_cached_in_memory_and_on_disk(tmp_path, monkeypatch):
    text = i1_hex_for_parser((TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text())
    _fresh_process(monkeypatch)
    first = gspmd_boundary(text, 8, cache_dir=tmp_path)
    assert not first.cached
    assert first.seconds > 0
    again = gspmd_boundary(text, 8, cache_dir=tmp_path)
    assert again.cached
    assert (again.parameters, again.outputs) == (first.parameters, first.outputs)
    assert len(list(tmp_path.glob("*.json"))) == 1
    _fresh_process(monkeypatch)
    from_disk = gspmd_boundary(text, 8, cache_dir=tmp_path)  # a new process, as it were
    assert from_disk.cached
    assert from_disk.outputs == first.outputs
    other = gspmd_boundary(text, 8, propagate_to_output=False, cache_dir=tmp_path)
    assert not other.cached  # other options, another program
    assert all(parse(s).is_replicated for s in other.outputs)


def test_a_corrupt_cache_file_is_compiled_again(tmp_path, monkeypatch):
    text = i1_hex_for_parser((TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text())
    _fresh_process(monkeypatch)
    first = gspmd_boundary(text, 8, cache_dir=tmp_path)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    _fresh_process(monkeypatch)
    again = gspmd_boundary(text, 8, cache_dir=tmp_path)
    assert not again.cached
    assert again.outputs == first.outputs


@pytest.mark.parametrize(
    ("sharding", "shape", "why"),
    [
        ("{devices=[4,1,2]<=[8] last_tile_dim_replicate}", (16, 8), None),
        ("{replicated}", (3,), None),
        ("{devices=[8,1]<=[8]}", (12, 4), "is uneven"),
        ("{manual}", (8,), "is manual"),
        ("{devices=[2,2]<=[4]}", (8, 8), "spans 4 devices, not 8"),
        ("{devices=[8]<=[8]}", (8, 8), "has 1 dims for a value of rank 2"),
    ],
)
def test_which_of_gspmds_choices_can_be_pinned(sharding, shape, why):
    found = _unpinnable(sharding, shape, 8)
    assert found == why if why is None else why in found


def test_a_failed_gspmd_compile_leaves_the_values_open_with_a_warning(monkeypatch):
    def refuse(*args, **kwargs):
        raise ShardyConvertError("GSPMD does not compile the program: (the test's reason)")

    from shardy_convert.passes import match_gspmd_boundary

    monkeypatch.setattr(match_gspmd_boundary, "gspmd_boundary", refuse)
    text = (TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text()
    with pytest.warns(ShardyConvertWarning, match="0 of 5 open values pinned.*the test's"):
        matched = convert(text, match_gspmd_boundary=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert matched == convert(text)  # today's conversion, nothing else


def test_the_plugin_wrapper_counts_and_logs_a_fallback_once(monkeypatch, caplog):
    from shardy_convert.passes import match_gspmd_boundary
    from tests.plugin.test_wrapper import jaxlib_options, portable

    monkeypatch.setattr(
        match_gspmd_boundary,
        "gspmd_boundary",
        lambda *a, **k: Boundary(("{replicated}",) * 4, ()),  # no output shardings
    )
    session = wrapper.Session(Settings(match_gspmd_boundary=True))
    program = portable((TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text())
    with caplog.at_level("WARNING", logger="shardy_convert.wrapper"):
        for _ in range(3):
            session.compile(program, b"mlir", jaxlib_options(8))
    assert session.counters.boundary_fallbacks == 1
    assert session.counters.boundary_matched == 0
    assert session.counters.converted == 1
    assert session.counters.cached == 2
    (record,) = [r for r in caplog.records if "GSPMD's boundary" in r.getMessage()]
    assert "no sharding for result 0 of @main" in record.getMessage()


def test_the_plugin_wrapper_matches_with_the_programs_own_options():
    from tests.plugin.test_wrapper import jaxlib_options, portable

    text = (TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text()
    session = wrapper.Session(Settings(match_gspmd_boundary=True, emit="text"))
    code, *_ = session.compile(portable(text), b"mlir", jaxlib_options(8))
    assert session.counters.boundary_matched == 1
    assert session.counters.boundary_fallbacks == 0
    assert all("sdy.sharding" in attrs for attrs in _result_attrs(code.decode()))


def test_opt_runs_the_pass_alone_and_says_what_it_did():
    from shardy_convert.converter import run_passes
    from shardy_convert.errors import ShardyConvertNote
    from shardy_convert.passes import pipeline

    text = (TESTDATA / "torch_xla" / "tp_mlp_train.mlir").read_text()
    with pytest.warns(ShardyConvertNote, match="match-gspmd-boundary: 5 of 5 open values pinned"):
        out = run_passes(text, "match-gspmd-boundary{num-devices=8}")
    assert "shardy_convert." not in out  # what it did comes back as a value, not an attribute
    pinned = [a for a in _result_attrs(out) if "mhlo.sharding" in a]
    assert len(pinned) == 5
    with new_context() as ctx:  # the pass's own result
        module = parse_module(text, ctx)
        (step,) = pipeline.parse("match-gspmd-boundary{num-devices=8}")
        outcome = pipeline.run(module, (step,)).of(BoundaryOutcome)
    assert (outcome.open, outcome.pinned, outcome.reason) == (5, 5, None)


def test_check_with_the_option_in_a_fresh_process(tmp_path):
    # The GSPMD compile while converting and check's compiles use xla/'s clients, one per
    # device count, none reading XLA_FLAGS. A process of its own, with no XLA_FLAGS, as a
    # user runs it.
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    inputs = [str(TESTDATA / "torch_xla" / name) for name, _ in UNLIKE]
    command = [sys.executable, "-m", "shardy_convert", "check", "--match-gspmd-boundary"]
    child = subprocess.run(
        [*command, *inputs], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert child.returncode == 0, child.stdout + child.stderr
    lines = [line for line in child.stdout.splitlines() if line.startswith(str(TESTDATA))]
    assert len(lines) == 2, child.stdout  # the verdict lines (cost tables and summary besides)
    assert all(": same program" in line for line in lines), lines
