"""Converted modules compile and run through a genuine PJRT C-API plugin.

OpenXLA's CPU plugin from PyPI (`xla-cpu-pjrt`) driven by `pypjrt`, a pure-Python PJRT C-API
client, with 16 CPU devices: the converted module is compiled with the Shardy partitioner,
its GSPMD original with GSPMD, and both must place every argument the same way (same block
on every partition) and compute the same outputs on the same random inputs. The portable
artifact (VHLO bytecode) form, which is what XLA's PJRT client hands a plugin, must too.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from shardy_convert import ShardyConvertError, convert
from shardy_convert.commands.check import main_signature
from tests import pjrt_plugin
from tests.conftest import real_graph

try:
    CLIENT = pjrt_plugin.get_client(16)
except ShardyConvertError as e:  # pypjrt or the plugin .so is missing, or does not load
    pytest.skip(f"the xla-cpu-pjrt plugin cannot load: {e}", allow_module_level=True)

# (manifest path, graph index): torch_xla V1 lists in non-identity and custom device orders,
# a two-graph training dump, 16 devices with strided device ids, JAX shard_map (partial and
# full manual) and a 3-D mesh with partial replication.
CASES = [
    ("torch_xla/matmul_2x4.dump", 0),
    ("torch_xla/custom_device_ids_manual.dump", 0),
    ("torch_xla/tp_mlp_train.dump", 0),
    ("torch_xla/tp_mlp_train.dump", 1),
    ("torch_xla/strided16.dump", 0),
    ("torch_xla/mesh3d_partial.mlir", 0),
    ("jax/shard_map_partial.gspmd.mlir", 0),
    ("jax/shard_map_full.gspmd.mlir", 0),
]


def _graph(path: str, index: int) -> tuple[str, int]:
    entry, graph = real_graph(path, index)
    assert entry["expect"] == "ok"
    return graph, entry["num_devices"]


def _inputs(text: str, seed: int = 0) -> tuple[list[np.ndarray], list[tuple[int, ...]]]:
    """Random arguments for @main, and its result shapes."""
    signature = main_signature(text)
    rng = np.random.default_rng(seed)
    args = []
    for shape, dtype in signature.args:
        if dtype == np.bool_:
            args.append(rng.integers(0, 2, size=shape).astype(bool))
        elif np.issubdtype(dtype, np.integer):
            args.append(rng.integers(0, 8, size=shape).astype(dtype))
        else:
            args.append(rng.standard_normal(size=shape).astype(dtype))
    return args, [shape for shape, _ in signature.results]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _placements(executable, inputs) -> list[list[tuple[slice, ...]]]:
    """The block of every argument each partition holds (semantic sharding equality)."""
    n = executable.num_partitions
    return [s.blocks(x.shape, n) for s, x in zip(executable.parameter_shardings, inputs)]


def _assert_same_values(want: list[np.ndarray], got: list[np.ndarray]) -> None:
    assert len(want) == len(got)
    for k, (w, g) in enumerate(zip(want, got)):
        assert w.shape == g.shape, f"output {k}: {w.shape} vs {g.shape}"
        assert w.dtype == g.dtype, f"output {k}: {w.dtype} vs {g.dtype}"
        assert np.allclose(w, g, rtol=1e-5, atol=1e-5, equal_nan=True), (
            f"output {k}: max abs diff {np.max(np.abs(w.astype(float) - g.astype(float)))}"
        )


def test_plugin_is_a_real_pjrt_c_api_plugin():
    path = pjrt_plugin.plugin_path()
    assert path.endswith("xla_cpu_pjrt.so")
    assert CLIENT.platform == "cpu"
    assert CLIENT.num_devices == 16
    low, high = CLIENT.stablehlo_versions
    assert low <= high
    # One client per process: asking again, for fewer devices, gives the same one.
    assert pjrt_plugin.get_client(8) is CLIENT
    with pytest.raises(ShardyConvertError, match="device count is fixed"):
        pjrt_plugin.get_client(32)


@pytest.mark.slow
@pytest.mark.parametrize(("path", "index"), CASES, ids=[f"{p}:{k}" for p, k in CASES])
def test_converted_module_runs_like_the_original(path, index):
    original, n = _graph(path, index)
    converted = convert(original, num_devices=n)
    assert "mhlo.sharding" not in converted
    assert "sdy.mesh @mesh" in converted

    gspmd = CLIENT.compile(original, n, shardy=False)
    shardy = CLIENT.compile(converted, n, shardy=True)
    assert gspmd.num_partitions == shardy.num_partitions == n
    assert sorted(shardy.launch_devices) == list(range(n))
    assert len(shardy.parameter_shardings) == len(gspmd.parameter_shardings)

    inputs, shapes = _inputs(original)
    assert _placements(shardy, inputs) == _placements(gspmd, inputs), (
        [str(s) for s in gspmd.parameter_shardings],
        [str(s) for s in shardy.parameter_shardings],
    )
    assert any(s.kind == "tiled" for s in shardy.parameter_shardings), "nothing is sharded"

    want = CLIENT.run(gspmd, inputs, output_shapes=shapes)
    got = CLIENT.run(shardy, inputs, output_shapes=shapes)
    assert [w.shape for w in want] == [tuple(s) for s in shapes]
    assert any(np.any(w != 0) for w in want if w.size)
    _assert_same_values(want, got)


@pytest.mark.parametrize(
    "path", ["torch_xla/custom_device_ids_manual.mlir", "jax/shard_map_partial.gspmd.mlir"]
)
def test_portable_artifact_of_converted_module(path):
    original, n = _graph(path, 0)
    converted = convert(original, num_devices=n)
    target = CLIENT.portable_target()
    low, high = CLIENT.stablehlo_versions
    assert _version(low) <= _version(target) <= _version(high)
    artifact = CLIENT.portable_artifact(converted)
    assert artifact[:4] == b"ML\xefR"  # MLIR bytecode
    assert b"StableHLO_v" in artifact[:32]
    # Shardy's round-trip form of the mesh travels inside the artifact.
    assert b"xla.sdy.meshes" in artifact

    from_text = CLIENT.compile(converted, n, shardy=True)
    from_artifact = CLIENT.compile(artifact, n, shardy=True)
    inputs, shapes = _inputs(original, seed=1)
    assert _placements(from_artifact, inputs) == _placements(from_text, inputs)
    _assert_same_values(
        CLIENT.run(from_text, inputs, output_shapes=shapes),
        CLIENT.run(from_artifact, inputs, output_shapes=shapes),
    )


def test_sharded_matmul_matches_numpy():
    """An oracle independent of XLA for the argument placement and output reassembly."""
    a_sharding = "{devices=[4,1,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}"
    text = """
    module @m attributes {mhlo.num_partitions = 8 : i32} {
      func.func public @main(
          %a: tensor<8x6xf32> {mhlo.sharding = "A_SHARDING"},
          %b: tensor<6x4xf32> {mhlo.sharding = "{devices=[1,2,4]<=[8] last_tile_dim_replicate}"})
          -> (tensor<8x4xf32> {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"}) {
        %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]
            : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
        return %0 : tensor<8x4xf32>
      }
    }""".replace("A_SHARDING", a_sharding)
    converted = convert(text, num_devices=8)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 6)).astype(np.float32)
    b = rng.standard_normal((6, 4)).astype(np.float32)
    for module, shardy in ((text, False), (converted, True)):
        exe = CLIENT.compile(module, 8, shardy=shardy)
        assert [s.kind for s in exe.parameter_shardings] == ["tiled", "tiled"]
        assert exe.output_shardings[0].kind == "tiled"
        (out,) = CLIENT.run(exe, [a, b])
        assert np.allclose(out, a @ b, rtol=1e-5, atol=1e-5)


def test_a_wrong_device_order_is_caught():
    """Negative control: dropping the mesh's device_ids still compiles, but moves shards."""
    original, n = _graph("torch_xla/custom_device_ids_manual.mlir", 0)
    converted = convert(original, num_devices=n)
    broken = re.sub(r", device_ids=\[[\d, ]+\]>", ">", converted, count=1)
    broken = re.sub(r", device_ids = dense<\[[\d, ]+\]> : tensor<\d+xi64>", "", broken)
    assert broken != converted
    gspmd = CLIENT.compile(original, n, shardy=False)
    wrong = CLIENT.compile(broken, n, shardy=True)
    inputs, _ = _inputs(original)
    assert _placements(wrong, inputs) != _placements(gspmd, inputs)


def test_plugin_reports_a_rejected_module():
    with pytest.raises(ShardyConvertError, match="PJRT plugin rejected the module"):
        CLIENT.compile("module { func.func @main() { stablehlo.bogus } }", 8, shardy=True)


def test_plugin_and_jaxlib_client_agree_in_one_process():
    """jaxlib's own CPU client (16 devices, XLA_FLAGS) and the plugin .so live side by side."""
    import jax
    from jax._src.sharding_impls import GSPMDSharding

    from shardy_convert.commands.check import compile_module

    original, n = _graph("torch_xla/matmul_2x4.mlir", 0)
    converted = convert(original, num_devices=n)
    inputs, shapes = _inputs(original, seed=3)
    compiled = compile_module(converted, n, shardy=True)
    args = [
        jax.device_put(x, GSPMDSharding(compiled.devices, s))
        for x, s in zip(inputs, compiled.parameters)
    ]
    results = compiled.executable.execute_sharded(args).disassemble_into_single_device_arrays()
    want = [
        np.asarray(
            jax.make_array_from_single_device_arrays(
                shape, GSPMDSharding(compiled.devices, s), arrays
            )
        )
        for arrays, s, shape in zip(results, compiled.outputs, shapes)
    ]
    got = CLIENT.run(CLIENT.compile(converted, n, shardy=True), inputs, output_shapes=shapes)
    _assert_same_values(want, got)
