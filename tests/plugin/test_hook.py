"""The PJRT pre-compile hook in front of two real clients: jaxlib's CPU client and pypjrt over
the xla-cpu-pjrt plugin. GSPMD programs from torch_xla dumps compile with the Shardy
partitioner into the same placements and values as the originals."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from shardy_convert.commands.check import compare, compile_module
from shardy_convert.errors import InternalError, ShardyConvertError
from shardy_convert.formats import dump
from shardy_convert.formats import module as formats
from shardy_convert.hook import Hook
from shardy_convert.sharding import parse
from tests.conftest import TESTDATA


def graph(name: str, index: int = 0) -> str:
    return dump.graphs((TESTDATA / "torch_xla" / name).read_text())[index].text


CUSTOM = graph("custom_device_ids_manual.dump")
MATMUL = graph("matmul_2x4.dump")
ESCAPE = graph("manual_escape.dump")


def placements(executable) -> list:
    """Parameter shardings as semantic values (V1 and V2 spellings compare equal)."""
    return [parse(str(s)) for s in executable.parameter_shardings]


def jaxlib_compile_options(n: int):
    from jax._src.lib import xla_client as xc

    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_partitions, build.num_replicas = n, 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = False
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    return options


def test_hook_in_front_of_jaxlib_cpu_client():
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc

    backend = xla_bridge.get_backend("cpu")
    devices = xc.DeviceList(tuple(backend.devices()[:8]))
    hook = Hook()
    compile_and_load = hook.wrap(backend.compile_and_load)
    options = jaxlib_compile_options(8)
    exe = compile_and_load(CUSTOM, devices, options)
    assert options.executable_build_options.use_shardy_partitioner
    got = [xc.HloSharding.from_proto(p) for p in exe.get_parameter_shardings()]
    assert got == compile_module(CUSTOM, 8, shardy=False).parameters
    compile_and_load(CUSTOM, devices, jaxlib_compile_options(8))
    assert (hook.stats.hits, hook.stats.misses, hook.stats.failures) == (1, 1, 0)


def test_every_graph_of_a_retraced_dump_is_converted_once():
    hook = Hook()
    graphs = [g.text for g in dump.graphs((TESTDATA / "torch_xla/linear_retrace.dump").read_text())]
    for _ in range(3):  # three "training steps" recompiling the same graphs
        outputs = [hook(g) for g in graphs]
    distinct = len(set(graphs))
    assert hook.stats.misses == distinct
    assert hook.stats.hits == 3 * len(graphs) - distinct
    assert all("sdy.mesh @mesh" in out for out in outputs)
    report = compare(graphs[2], outputs[2], 2)
    assert report.ok, str(report)


def test_hook_in_front_of_pjrt_c_api_plugin():
    from tests import pjrt_plugin

    plugin = pjrt_plugin.get_client()
    pypjrt = plugin._pypjrt
    hook = Hook()
    compile_fn = hook.wrap(plugin.client.compile)
    options = pypjrt.CompileOptions(
        num_replicas=1, num_partitions=8, use_spmd_partitioning=True, use_shardy_partitioner=False
    )
    handle = compile_fn(MATMUL, options=options)
    assert options.use_shardy_partitioner
    shardy = plugin._describe(handle, 8, True)
    gspmd = plugin.compile(MATMUL, 8, shardy=False)
    assert placements(shardy) == placements(gspmd)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in ((8, 8), (8, 8), (16, 8), (8, 16))]
    for want, got in zip(plugin.run(gspmd, inputs), plugin.run(shardy, inputs)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_portable_artifact_in_portable_out():
    from tests import pjrt_plugin

    plugin = pjrt_plugin.get_client()
    artifact = plugin.portable_artifact(CUSTOM)
    hook = Hook()
    out = hook(artifact)
    assert formats.detect(out) == "portable"
    assert formats.portable_version(out) == formats.portable_version(artifact)
    assert b"xla.sdy.meshes" in out
    assert hook(out) is out  # already Shardy (round-trip form): passes through
    exe = plugin.compile(out, 8, shardy=True)
    assert placements(exe) == placements(plugin.compile(CUSTOM, 8, shardy=False))


def test_failure_policy_raise_and_passthrough(caplog):
    with pytest.raises(ShardyConvertError, match="manual value escapes"):
        Hook()(ESCAPE)
    hook = Hook(on_error="passthrough")
    with caplog.at_level(logging.WARNING, logger="shardy_convert.hook"):
        assert hook(ESCAPE) is ESCAPE
        assert hook(ESCAPE) is ESCAPE
    assert len([r for r in caplog.records if "unconverted" in r.message]) == 1
    assert (hook.stats.failures, hook.stats.hits) == (1, 1)


UNEVEN = (
    'func.func @main(%arg0: tensor<1x128xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})'
    " -> tensor<1x128xf32> {\n"
    "  %0 = stablehlo.add %arg0, %arg0 : tensor<1x128xf32>\n"
    "  return %0 : tensor<1x128xf32>\n}\n"
)


def test_an_uneven_sharding_is_a_failure_of_the_hook_not_a_warning():
    """1x128 split 8 ways on dim 0: Shardy would compile it replicated, GSPMD padded."""
    with pytest.raises(ShardyConvertError, match="another program"):
        Hook(on_error="raise")(UNEVEN)
    hook = Hook(on_error="passthrough")
    assert hook(UNEVEN) is UNEVEN  # compiled unconverted, with GSPMD
    assert hook.stats.failures == 1


def test_passthrough_failure_keeps_gspmd_partitioner():
    hook = Hook(on_error="passthrough")
    seen = {}

    def fake_compile(program, options):
        seen["program"], seen["shardy"] = (
            program,
            options.executable_build_options.use_shardy_partitioner,
        )

    hook.wrap(fake_compile)(ESCAPE, jaxlib_compile_options(8))
    assert seen == {"program": ESCAPE, "shardy": False}


def test_concurrent_calls_agree_and_count_every_call():
    hook = Hook(cache_size=4)
    programs = [MATMUL, CUSTOM] * 8
    results = [None] * len(programs)

    def work(k):
        results[k] = hook(programs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(programs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == results[2]
    assert results[1] == results[3]
    assert hook.stats.hits + hook.stats.misses == len(programs)
    assert 2 <= hook.stats.misses <= len(programs)


def test_cache_is_bounded():
    hook = Hook(cache_size=1)
    hook(MATMUL)
    hook(CUSTOM)
    hook(MATMUL)
    assert hook.stats.misses == 3


def test_documented_example_runs_on_both_clients():
    """examples/hook_on_pjrt_clients.py, as docs/library.md shows it, in a fresh process."""
    import subprocess
    import sys

    example = TESTDATA.parent / "examples" / "hook_on_pjrt_clients.py"
    dump_file = TESTDATA / "torch_xla" / "linear_retrace.dump"
    result = subprocess.run(
        [sys.executable, str(example), str(dump_file), "--devices", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert sum("same shardings as GSPMD on both clients" in line for line in lines) == 16
    assert lines[-1].startswith("hook: 8 converted, 24 from cache, 0 passed through, 0 failed")


def _a_bug(request, program):
    return {}["no such key"]  # a bug of ours, met while converting


def test_a_bug_is_passed_through_counted_apart_and_logged_with_where(monkeypatch, caplog):
    """passthrough promises the run goes on with GSPMD: a bug of ours too, never the host's
    crash; it is counted among the failures and apart, as an internal error, and logged once
    per program with the frame it happened in and the traceback, to be reported."""
    monkeypatch.setattr("shardy_convert.converter.ConvertRequest.convert", _a_bug)
    hook = Hook(on_error="passthrough")
    with caplog.at_level(logging.WARNING, logger="shardy_convert.hook"):
        assert hook(MATMUL) is MATMUL
        assert hook(MATMUL) is MATMUL
    (record,) = [r for r in caplog.records if "internal error" in r.message]
    assert "KeyError: 'no such key' (at " in record.message
    assert "test_hook.py:" in record.message
    assert record.message.endswith(" in _a_bug)")
    assert record.exc_info[0] is KeyError
    assert (hook.stats.internal_errors, hook.stats.failures, hook.stats.hits) == (1, 1, 1)
    assert "2 passed through, 0 failed (1 internal error)" in str(hook.stats)


def test_a_bug_under_raise_is_a_shardy_convert_error_caused_by_it(monkeypatch):
    monkeypatch.setattr("shardy_convert.converter.ConvertRequest.convert", _a_bug)
    hook = Hook(on_error="raise")
    with pytest.raises(InternalError, match="internal error: KeyError") as raised:
        hook(MATMUL)
    assert isinstance(raised.value, ShardyConvertError)
    assert isinstance(raised.value.__cause__, KeyError)
    assert (hook.stats.internal_errors, hook.stats.failures) == (1, 1)


def test_a_bug_passed_through_keeps_the_gspmd_partitioner(monkeypatch):
    monkeypatch.setattr("shardy_convert.converter.ConvertRequest.convert", _a_bug)
    seen = {}

    class Options:
        use_shardy_partitioner = False

    compile_fn = Hook(on_error="passthrough").wrap(lambda p, o: seen.update(p=p, o=o))
    compile_fn(MATMUL, Options())
    assert seen["p"] is MATMUL
    assert seen["o"].use_shardy_partitioner is False
