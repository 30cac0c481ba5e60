"""The PJRT plugin wrapper without torch: its compile-options rewriting (against jaxlib's own
CompileOptions as the oracle), its Python hook, and the built library loaded as a plugin by a
real PJRT C-API client (pypjrt) around the real xla-cpu-pjrt plugin.

torch_xla end to end is e2e/test_torch_xla.py (make test-e2e)."""

from __future__ import annotations

import re
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from shardy_convert.errors import ShardyConvertError
from shardy_convert.formats import hlo
from shardy_convert.formats import module as formats
from shardy_convert.plugin import compile_options, program, wrapper
from shardy_convert.plugin.settings import Settings
from tests import pjrt_plugin
from tests.conftest import ROOT, TESTDATA

MATMUL = (TESTDATA / "torch_xla" / "matmul_2x4.mlir").read_text()
ESCAPE = (TESTDATA / "torch_xla" / "manual_escape.mlir").read_text()


def jaxlib_options(
    n: int, *, shardy: bool = False, order=None, to_parameters=(False,), to_output=(True,)
) -> bytes:
    """Serialized options as XLA's own C++ writes them (jaxlib's CompileOptions)."""
    from jax._src.lib import xla_client as xc

    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_partitions, build.num_replicas = n, 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    devices = np.arange(n) if order is None else np.array(order)
    build.device_assignment = xc.DeviceAssignment.create(devices.reshape(1, n))
    build.allow_spmd_sharding_propagation_to_output = list(to_output)
    build.allow_spmd_sharding_propagation_to_parameters = list(to_parameters)
    return options.SerializeAsString()


def jaxlib_parse(data: bytes):
    from jax._src.lib import xla_client as xc

    return xc.CompileOptions.ParseFromString(data)  # a static method: a new object


# --------------------------------------------------------------------------------------------
# Compile options


def test_options_read_as_xla_wrote_them():
    opts = compile_options.decode(jaxlib_options(8, order=[3, 1, 2, 0, 4, 5, 6, 7]))
    assert opts.num_partitions == 8
    assert opts.num_replicas == 1
    assert opts.use_spmd_partitioning
    assert not opts.use_shardy_partitioner
    assert opts.device_assignment == (3, 1, 2, 0, 4, 5, 6, 7)
    assert opts.propagate_to_output == (True,)
    assert opts.propagate_to_parameters == (False,)


def test_shardy_is_switched_on_and_every_other_byte_kept():
    original = jaxlib_options(8)
    rewritten = compile_options.rewrite(original)
    assert rewritten.startswith(original)
    assert len(rewritten) == len(original) + 5  # field 3 { field 19: 1 }: 1 + 1 + 2 + 1 bytes
    parsed = jaxlib_parse(rewritten)
    assert parsed.executable_build_options.use_shardy_partitioner
    assert parsed.SerializeAsString() == jaxlib_options(8, shardy=True)


def test_a_new_device_order_replaces_the_assignment():
    rewritten = compile_options.rewrite(jaxlib_options(8), devices=[5, 2, 7, 0, 3, 6, 1, 4])
    assert compile_options.decode(rewritten).device_assignment == (5, 2, 7, 0, 3, 6, 1, 4)
    expected = jaxlib_options(8, shardy=True, order=[5, 2, 7, 0, 3, 6, 1, 4])
    assert jaxlib_parse(rewritten).SerializeAsString() == expected


@pytest.mark.parametrize("data", [b"\x1a\x05\x28", b"\x1a\xff", b"\x07", b"\x1a\x02\x2b\x00"])
def test_options_that_are_no_proto_are_an_error(data):
    with pytest.raises(ShardyConvertError, match="compile options"):
        compile_options.decode(data)


# --------------------------------------------------------------------------------------------
# The hook


def portable(text: str) -> bytes:
    return pjrt_plugin.portable_artifact(text, "1.13.0")


def test_a_portable_gspmd_program_comes_back_portable_shardy():
    code, form, options, order = program.convert_program(
        portable(MATMUL), "mlir", jaxlib_options(8)
    )
    # the caller's own device order, given so the wrapper spells the compiled shardings as
    # GSPMD does (explicit device lists)
    assert order == struct.pack("<8i", *range(8))
    assert form == b"mlir"
    assert formats.detect(code) == "portable"
    assert formats.portable_version(code) == "1.13.0"
    assert b"xla.sdy.meshes" in code
    assert compile_options.decode(options).use_shardy_partitioner


@pytest.mark.parametrize("emit", ["text", "bytecode"])
def test_sdy_text_or_bytecode_on_request(emit):
    code, *_ = program.convert_program(portable(MATMUL), "mlir", jaxlib_options(8), emit=emit)
    assert formats.detect(code) == emit
    if emit == "text":
        assert b"sdy.mesh @mesh" in code
        assert b"mhlo.sharding" not in code


def test_an_hlo_proto_is_converted_too():
    from jax._src.lib import xla_client as xc
    from jaxlib import _jax

    hlo = _jax.mlir.mlir_module_to_xla_computation(MATMUL, use_tuple_args=False)
    assert isinstance(hlo, xc.XlaComputation)
    code, form, *_ = program.convert_program(
        hlo.as_serialized_hlo_module_proto(), "hlo", jaxlib_options(8)
    )
    assert form == b"mlir"
    assert formats.detect(code) == "portable"
    assert b"xla.sdy.meshes" in code
    # no wrapper wraps a plugin in this process: the oldest version jaxlib writes
    assert wrapper.wrapped_plugin_version() == ""
    assert formats.portable_version(code) == formats.stablehlo.get_minimum_version()


UNANNOTATED = """
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"},
                %arg1: tensor<8x8xf32>, %arg2: tensor<f32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) {
  %0 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %1 = stablehlo.add %arg1, %0 : tensor<8x8xf32>
  return %1, %arg0 : tensor<8x8xf32>, tensor<8x8xf32>
}
"""
CLOSED = "sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>"


@pytest.mark.parametrize(("to_parameters", "to_output"), [((False,), (True,)), ((True,), (False,))])
def test_unannotated_main_values_follow_the_propagation_options(to_parameters, to_output):
    """XLA's importer: closed replicated where the options allow no propagation (torch_xla:
    to parameters no, to the output yes), else left open to Shardy's propagation."""
    options = jaxlib_options(8, to_parameters=to_parameters, to_output=to_output)
    text, *_ = program.convert_program(UNANNOTATED.encode(), "mlir", options, emit="text")
    signature = next(line for line in text.decode().splitlines() if "func.func @main" in line)
    params, results = signature.split("->")
    assert (f"%arg1: tensor<8x8xf32> {{{CLOSED}}}" in params) == (not to_parameters[0])
    assert ("%arg2: tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}" in params) == (
        not to_parameters[0]
    )
    assert (f"(tensor<8x8xf32> {{{CLOSED}}}" in results) == (not to_output[0])


def test_a_flag_list_of_the_wrong_length_fails_located_as_in_convert():
    """One reading of XLA's flag rule (options.propagation_flags) for the CLI and the plugin."""
    options = jaxlib_options(8, to_parameters=(True, False))
    with pytest.raises(ShardyConvertError) as error:
        program.convert_program(UNANNOTATED.encode(), "mlir", options, emit="text")
    message = str(error.value)
    line = UNANNOTATED.splitlines().index(next(x for x in UNANNOTATED.splitlines() if "@main" in x))
    assert f"{line + 1}:1: allow_spmd_sharding_propagation_to_parameters has 2 values" in message
    assert "@main has 3 arguments" in message


def test_no_shardy_form_names_the_graph_and_the_reason():
    session = wrapper.Session()
    answer = None
    with pytest.raises(ShardyConvertError) as error:
        answer = session.compile(portable(ESCAPE), b"mlir", jaxlib_options(8))
    assert answer is None
    assert "cannot convert graph" in str(error.value)
    assert "manual" in str(error.value)
    assert (session.counters.failed, session.counters.converted) == (1, 0)


def test_passthrough_hands_the_program_back_unchanged_and_counts_it():
    session = wrapper.Session(Settings(on_error="passthrough"))
    program, options = portable(ESCAPE), jaxlib_options(8)
    assert session.compile(program, b"mlir", options) == (program, b"mlir", options, b"")
    assert session.counters.passed_through == 1


def test_an_uneven_parameter_takes_gspmds_padded_shape():
    """1x128 split 8 ways on dim 0: GSPMD pads it to 8x128 (device 0 holds the row), which is
    what torch_xla hands over; the converted program takes that padded shape, evenly split."""
    uneven = portable(
        'func.func @main(%arg0: tensor<1x128xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"})'
        " -> tensor<1x128xf32> {\n"
        "  %0 = stablehlo.add %arg0, %arg0 : tensor<1x128xf32>\n"
        "  return %0 : tensor<1x128xf32>\n}\n"
    )
    code, _, _, _ = wrapper.Session(Settings(emit="text")).compile(
        uneven, b"mlir", jaxlib_options(8)
    )
    assert b"%arg0: tensor<8x128xf32>" in code
    assert b"stablehlo.slice %arg0 [0:1, 0:128]" in code


def test_an_uneven_sharding_with_no_padded_form_is_refused_never_handed_over_as_another_program():
    """An op's own uneven sharding: neither a boundary nor a @Sharding, no padded form."""
    uneven = portable(
        "func.func @main(%arg0: tensor<1x128xf32>) -> tensor<1x128xf32> {\n"
        '  %0 = stablehlo.add %arg0, %arg0 {mhlo.sharding = "{devices=[8,1]<=[8]}"}'
        " : tensor<1x128xf32>\n"
        "  return %0 : tensor<1x128xf32>\n}\n"
    )
    with pytest.raises(ShardyConvertError, match=r"shape \[1, 128\].*dim 0 of size 1 is split 8"):
        wrapper.Session().compile(uneven, b"mlir", jaxlib_options(8))
    session = wrapper.Session(Settings(on_error="passthrough"))
    options = jaxlib_options(8)
    assert session.compile(uneven, b"mlir", options) == (uneven, b"mlir", options, b"")
    assert session.counters.passed_through == 1


def test_each_distinct_program_is_converted_once():
    session = wrapper.Session()
    program = portable(MATMUL)
    first = session.compile(program, b"mlir", jaxlib_options(8))
    assert session.compile(program, b"mlir", jaxlib_options(8)) == first
    assert (session.counters.converted, session.counters.cached) == (1, 1)


def test_torch_xlas_own_hlo_proto_compiles_to_the_same_program():
    # torch_xla's HloModuleProto (make testdata): XLA's importer leaves the GELU's erf as an
    # mhlo op, which no StableHLO context reads; the wrapper hands it on in XLA's own
    # encoding (custom_call @mhlo.erf), which the plugin's StableHLO reader turns back.
    from jaxlib import _jax

    from shardy_convert.commands.check import Verdict, compare
    from shardy_convert.ir.parse import new_context

    proto = (TESTDATA / "torch_xla" / "tp_mlp_train.hlo.pb").read_bytes()
    with new_context() as ctx, pytest.raises(ShardyConvertError, match="dialect 'mhlo'"):
        formats.load(bytes(_jax.mlir.hlo_to_stablehlo(proto)), ctx, trusted=True)
    code, form, options, order = program.convert_program(
        proto, "hlo", jaxlib_options(8), emit="text"
    )
    assert (form, order) == (b"mlir", struct.pack("<8i", *range(8)))
    assert b"stablehlo.custom_call @mhlo.erf" in code
    assert b"sdy.mesh @mesh" in code
    assert b"mhlo.sharding" not in code
    assert compile_options.decode(options).use_shardy_partitioner
    portable_code, *_ = program.convert_program(proto, "hlo", jaxlib_options(8))
    assert formats.detect(portable_code) == "portable"
    report = compare(hlo.to_stablehlo(proto), code, 8)
    assert report.verdict in (Verdict.SAME, Verdict.REASSOCIATED), str(report)


@pytest.mark.parametrize("junk", [b"not a proto", b"", b"\x0a\x05hello"])
def test_an_unreadable_hlo_proto_is_an_error_message(junk):
    answer = wrapper.on_compile(junk, b"hlo", jaxlib_options(8))
    assert isinstance(answer, str)
    assert answer.startswith("cannot read the HLO module proto: ")


def test_on_compile_returns_errors_as_messages():
    answer = wrapper.on_compile(b"not a program", b"mlir", jaxlib_options(8))
    assert isinstance(answer, str)
    assert answer.startswith("1:1: cannot parse the module")
    answer = wrapper.on_compile(portable(MATMUL), b"mlir", b"\x07")
    assert isinstance(answer, str)
    assert "compile options" in answer


# --------------------------------------------------------------------------------------------
# The library, loaded as a plugin by a real PJRT client


def test_the_library_is_built_and_exports_only_the_plugin_entry():
    import ctypes

    path = wrapper.library_path()
    library = ctypes.CDLL(path)
    assert hasattr(library, "GetPjrtApi")
    nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
    if nm.returncode == 0:
        exported = {line.split()[-1] for line in nm.stdout.splitlines() if " T " in line}
        assert exported == {
            "GetPjrtApi",
            "ShardyConvertWrapperProblem",
            "ShardyConvertExecutableCache",
            "ShardyConvertPluginStablehloVersion",
        }
        assert " R ShardyConvertPjrtWrapper" in nm.stdout  # the marker (plugin_library.py)
    undefined = subprocess.run(["nm", "-D", "--undefined-only", path], capture_output=True)
    assert b"Py" not in undefined.stdout  # the Python C API is looked up at run time


CLIENT = """
import os, sys
import numpy as np
sys.path.insert(0, {root!r})
from shardy_convert.plugin import wrapper
from tests import pjrt_plugin
import pypjrt
os.environ.update({env!r})
try:
    client = pypjrt.Client.create(wrapper.library_path(), options={{"cpu_device_count": 8}})
    print("devices", client.device_count)
except Exception as e:
    print("ERROR", e)
"""


def run_client(env: dict, extra: str = "", timeout: float = 300) -> str:
    code = textwrap.dedent(CLIENT.format(root=str(ROOT), env=env)) + textwrap.dedent(extra)
    child = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout
    )
    assert child.returncode == 0, child.stderr[-2000:]
    return child.stdout


def test_without_a_plugin_to_wrap_every_call_says_why():
    out = run_client({"SHARDY_CONVERT_PLUGIN": ""})
    assert "ERROR" in out
    assert "SHARDY_CONVERT_PLUGIN" in out


# An op StableHLO 0.9.0 cannot spell (`result_accuracy` came in 1.9.0) in a sharded program.
ACCURATE = """
func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[8]}"}) -> tensor<8x8xf32> {
  %0 = stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""  # noqa: E501


def hlo_proto(text: str) -> bytes:
    from jaxlib import _jax

    computation = _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False)
    return computation.as_serialized_hlo_module_proto()


def test_without_a_wrapped_plugin_an_hlo_proto_targets_the_oldest_version_jaxlib_writes():
    assert wrapper.wrapped_plugin_version() == ""  # no wrapper wraps a plugin in this process
    oldest = re.escape(formats.stablehlo.get_minimum_version())
    with pytest.raises(program.ProgramError, match=f"portable artifact for StableHLO {oldest}"):
        program.convert_program(hlo_proto(ACCURATE), "hlo", jaxlib_options(8))


PLUGIN_VERSION = """
from shardy_convert.formats import module as formats
from tests.plugin.test_wrapper import hlo_proto, jaxlib_options
low, high = client._plugin.stablehlo_version_range  # the wrapped plugin's, passed through
print("theirs", ".".join(map(str, high)))
print("read", wrapper.wrapped_plugin_version())
answer = wrapper.on_compile(hlo_proto({text!r}), b"hlo", jaxlib_options(8))  # as the C side calls
print("written", formats.portable_version(answer[0]))
print("jaxlib", formats.stablehlo.get_current_version())
"""


def test_an_hlo_proto_becomes_an_artifact_of_the_newest_version_jaxlib_and_the_plugin_share():
    """Through the wrapper, the version the wrapped plugin names (as a framework targets its
    plugin): an op newer than jaxlib's oldest version converts."""
    out = run_client(
        wrapper.environment(pjrt_plugin.plugin_path()), PLUGIN_VERSION.format(text=ACCURATE)
    )
    said = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    theirs, ours = said["theirs"], said["jaxlib"]
    assert said["read"] == theirs, out  # the C side reads the plugin's own attribute
    newest = min(theirs, ours, key=formats.version_number)
    assert said["written"] == newest, out


def test_a_wrong_plugin_path_is_a_pjrt_error_naming_it(tmp_path):
    out = run_client({"SHARDY_CONVERT_PLUGIN": str(tmp_path / "missing.so")})
    assert "ERROR" in out
    assert "missing.so" in out


COMPILE_AND_RUN = """
from shardy_convert.sharding import parse
text = open({path!r}).read()
art = pjrt_plugin.portable_artifact(text, "1.13.0")
ours = pjrt_plugin.PluginClient.__new__(pjrt_plugin.PluginClient)
ours._pypjrt, ours.path, ours.client, ours.num_devices = pypjrt, "wrapper", client, 8
exe = ours.compile(art, 8, shardy=False)  # the wrapper switches Shardy on
ref = pjrt_plugin.compile(text, 8, shardy=False)
rng = np.random.default_rng(0)
args = [rng.standard_normal(s).astype(np.float32) for s in {shapes!r}]
got, want = ours.run(exe, args), pjrt_plugin.run(ref, args)
pairs = zip(exe.parameter_shardings, ref.parameter_shardings)
same = [parse(str(a)) == parse(str(b)) for a, b in pairs]
print("placements", all(same) and len(same) == len(args))
print("equal", all(np.array_equal(g, w) for g, w in zip(got, want)))
print("counters", wrapper.session().counters)
"""


def test_a_gspmd_program_compiles_with_shardy_through_the_wrapper():
    extra = COMPILE_AND_RUN.format(
        path=str(TESTDATA / "torch_xla/matmul_2x4.mlir"), shapes=[(8, 8), (8, 8), (16, 8), (8, 16)]
    )
    out = run_client(wrapper.environment(pjrt_plugin.plugin_path()), extra)
    assert "placements True" in out, out
    assert "equal True" in out, out
    assert "1 converted" in out, out


def interrupted_hook(code: bytes, form: bytes, options: bytes):
    """A hook a Ctrl-C interrupts (SHARDY_CONVERT_HOOK of the next test)."""
    raise KeyboardInterrupt


COMPILE_INTERRUPTED = """
art = pjrt_plugin.portable_artifact(open({path!r}).read(), "1.13.0")
ours = pjrt_plugin.PluginClient.__new__(pjrt_plugin.PluginClient)
ours._pypjrt, ours.path, ours.client, ours.num_devices = pypjrt, "wrapper", client, 8
try:
    ours.compile(art, 8, shardy=False)
    print("COMPILED")
except BaseException as e:
    print("RAISED", type(e).__name__, e)
"""


def test_a_keyboard_interrupt_in_the_hook_is_raised_again_in_the_host():
    """The wrapper keeps it and raises it in the host's main thread as soon as that runs
    Python again (here pypjrt's own code after the failed compile), never as the compile's
    error text (issue 19: `ValueError: shardy-convert: the hook raised: KeyboardInterrupt`)."""
    env = {
        **wrapper.environment(pjrt_plugin.plugin_path()),
        "SHARDY_CONVERT_HOOK": "tests.plugin.test_wrapper:interrupted_hook",
    }
    extra = COMPILE_INTERRUPTED.format(path=str(TESTDATA / "torch_xla/matmul_2x4.mlir"))
    out = run_client(env, extra, timeout=120)
    assert "RAISED KeyboardInterrupt" in out, out
    assert "the hook raised" not in out


def test_passthrough_refuses_a_manual_argument_xla_aborts_on():
    """torch_xla's ReplicateShardedData of a live manual tensor: compiled with GSPMD, XLA
    aborts the process (CHECK !IsManual()), so passthrough refuses it too."""
    program = portable(
        'func.func @main(%arg0: tensor<4x4xf32> {mhlo.sharding = "{manual}"}) -> '
        '(tensor<4x4xf32> {mhlo.sharding = "{replicated}"}) {\n'
        "  return %arg0 : tensor<4x4xf32>\n}\n"
    )
    session = wrapper.Session(Settings(on_error="passthrough"))
    for _ in range(2):  # converted once, refused every time
        with pytest.raises(ShardyConvertError, match="refused even with on_error='passthrough'"):
            session.compile(program, b"mlir", jaxlib_options(8))
    assert (session.counters.failed, session.counters.passed_through) == (2, 0)


# --------------------------------------------------------------------------------------------
# The CLI command for other frameworks


def test_the_cli_prints_the_wrapper_and_its_environment():
    from click.testing import CliRunner

    from shardy_convert.cli.main import main

    plugin = pjrt_plugin.plugin_path()
    result = CliRunner().invoke(main, ["plugin-wrapper", plugin, "--on-error", "passthrough"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == wrapper.library_path()
    assert f"export SHARDY_CONVERT_PLUGIN={plugin}" in lines
    assert "export SHARDY_CONVERT_ON_ERROR=passthrough" in lines


def test_the_cli_refuses_a_missing_plugin_as_a_usage_error(tmp_path):
    from click.testing import CliRunner

    from shardy_convert.cli.main import main

    result = CliRunner().invoke(main, ["plugin-wrapper", str(tmp_path / "none.so")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


# --------------------------------------------------------------------------------------------
# Custom device orders: an iota mesh, the order in the device assignment

ORDER = [5, 2, 7, 0, 3, 6, 1, 4]
# The embedding gather XLA's partitioner gets wrong on explicit device lists (issue 10): a table
# split on "model", indices on "data", of a mesh ["model"=4, "data"=2] in the order ORDER.
GATHER = """
func.func @main(
    %arg0: tensor<128x64xf32>
      {mhlo.sharding = "{devices=[4,1,2]5,3,2,6,7,1,0,4 last_tile_dim_replicate}"},
    %arg1: tensor<64xui32>
      {mhlo.sharding = "{devices=[2,4]5,2,7,0,3,6,1,4 last_tile_dim_replicate}"})
    -> (tensor<64x64xf32> {mhlo.sharding = "{devices=[2,4]5,2,7,0,3,6,1,4}"}) {
  %0 = stablehlo.reshape %arg1 : (tensor<64xui32>) -> tensor<64x1xui32>
  %1 = "stablehlo.gather"(%arg0, %0) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],
    collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 64>}> : (tensor<128x64xf32>, tensor<64x1xui32>) -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
"""


def gather_on_jaxlib(text: str, assignment: list[int]) -> np.ndarray:
    """Runs GATHER-like `text` with Shardy on jaxlib's CPU client; partition k on device
    assignment[k] (shardings read from the executable, so placement follows the program)."""
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

    backend = xla_bridge.get_backend("cpu")
    options = xc.CompileOptions.ParseFromString(jaxlib_options(8, shardy=True, order=assignment))
    devices = [backend.devices()[i] for i in assignment]
    exe = backend.compile_and_load(text, xc.DeviceList(tuple(devices)), options)
    params = [xc.HloSharding.from_proto(p) for p in exe.get_parameter_shardings()]
    (out,) = [xc.HloSharding.from_proto(p) for p in exe.get_output_shardings()]
    args = [jax.device_put(v, GSPMDSharding(devices, s)) for v, s in zip(GATHER_ARGS, params)]
    shards = exe.execute_sharded(args).disassemble_into_single_device_arrays()[0]
    return np.asarray(
        jax.make_array_from_single_device_arrays((64, 64), GSPMDSharding(devices, out), shards)
    )


_rng = np.random.default_rng(0)
GATHER_ARGS = [
    _rng.standard_normal((128, 64)).astype(np.float32),
    _rng.integers(0, 128, 64).astype(np.uint32),
]


def test_a_custom_order_leaves_the_mesh_for_the_device_assignment():
    text, _, options, order = program.convert_program(
        GATHER.encode(), "mlir", jaxlib_options(8), emit="text"
    )
    ids = [int(i) for i in np.frombuffer(order, dtype="<i4")]
    assert sorted(ids) == list(range(8))
    assert ids != list(range(8))
    assert b"device_ids" not in text
    assert compile_options.decode(options).device_assignment == tuple(ids)  # caller's: identity
    # The form computes the gather right; the mesh with device_ids does not (XLA's partitioner
    # on explicit device lists): the wrapper never hands the plugin that program.
    expected = GATHER_ARGS[0][GATHER_ARGS[1]]
    np.testing.assert_array_equal(gather_on_jaxlib(text.decode(), ids), expected)
    from shardy_convert import convert

    in_mesh = convert(GATHER, num_devices=8)
    assert f"device_ids=[{', '.join(map(str, ids))}]" in in_mesh
    assert not np.array_equal(gather_on_jaxlib(in_mesh, list(range(8))), expected)


def test_compiled_shardings_are_relabelled_into_the_callers_ids():
    from shardy_convert.plugin.optimized_program import relabel_program
    from shardy_convert.xla import compat as xla_compat

    text, _, _, order = program.convert_program(
        GATHER.encode(), "mlir", jaxlib_options(8), emit="text"
    )
    exe = pjrt_plugin.compile(text.decode(), 8, shardy=True)
    assert "<=" in str(exe.output_shardings[0])  # iota: the program's own partition ids
    ids = list(np.frombuffer(order, dtype="<i4"))
    hlo = exe.handle  # the plugin's optimized program, as PJRT clients read it
    client = pjrt_plugin.get_client(8)
    module = client._optimized_module(hlo)
    proto = module.as_serialized_hlo_module_proto()
    relabelled = xla_compat.hlo_module_from_proto(relabel_program(proto, "hlo", ids))
    (out,) = pjrt_plugin._output_shardings(relabelled.spmd_output_sharding, 1)
    table, indices = (
        pjrt_plugin.sharding_from_proto(p) for p in relabelled.spmd_parameters_shardings
    )
    from shardy_convert.sharding import parse

    assert parse(str(out)) == parse("{devices=[2,4]5,2,7,0,3,6,1,4}")
    assert parse(str(table)) == parse("{devices=[4,1,2]5,3,2,6,7,1,0,4 last_tile_dim_replicate}")
    assert parse(str(indices)) == parse("{devices=[2,4]5,2,7,0,3,6,1,4 last_tile_dim_replicate}")


ORDERED_RUN = """
from shardy_convert.plugin import compile_options
from tests.plugin.test_wrapper import GATHER, GATHER_ARGS
ours = pjrt_plugin.PluginClient.__new__(pjrt_plugin.PluginClient)
ours._pypjrt, ours.path, ours.client, ours.num_devices = pypjrt, "wrapper", client, 8
exe = ours.compile(pjrt_plugin.portable_artifact(GATHER, "1.13.0"), 8, shardy=False)
proto = exe.handle.device_assignment_proto()  # PJRT_LoadedExecutable_GetDeviceAssignment
print("assignment", list(compile_options.device_assignment(proto)))
(got,) = ours.run(exe, GATHER_ARGS)
print("equal", np.array_equal(got, GATHER_ARGS[0][GATHER_ARGS[1]]))
"""


def test_a_newer_caller_sees_its_own_device_assignment():
    # pypjrt speaks a newer PJRT C API than torch_xla 2.9 (0.75) and asks the executable for
    # its device assignment (0.79), then places each partition's shards by it. The plugin
    # ran the program in another order (iota mesh + permuted assignment): the caller must
    # see its own assignment, else the shards go to the wrong partitions.
    out = run_client(wrapper.environment(pjrt_plugin.plugin_path()), ORDERED_RUN)
    assert "assignment [0, 1, 2, 3, 4, 5, 6, 7]" in out, out
    assert "equal True" in out, out


def test_the_callers_assignment_is_the_plugins_read_through_the_order():
    plugin = compile_options.encode_device_assignment(ORDER)
    identity = compile_options.caller_assignment(plugin, ORDER)
    assert compile_options.device_assignment(identity) == tuple(range(8))
    shifted = compile_options.encode_device_assignment([10 + d for d in ORDER])
    assert compile_options.device_assignment(
        compile_options.caller_assignment(shifted, ORDER)
    ) == tuple(range(10, 18))
    with pytest.raises(ShardyConvertError, match="device order"):
        compile_options.caller_assignment(plugin, [0, 0, 1, 2, 3, 4, 5, 6])


def test_a_bug_follows_the_failure_policy_and_is_counted_apart(monkeypatch, caplog):
    """passthrough: the compile goes on with GSPMD, the bug is logged with where it happened;
    raise: the compile fails with the internal error (see hook.Hook's failure policy)."""

    def a_bug(*args, **kwargs):
        return {}["no such key"]

    monkeypatch.setattr(wrapper, "convert", a_bug)
    program, options = portable(MATMUL), jaxlib_options(8)
    session = wrapper.Session(Settings(on_error="passthrough"))
    with caplog.at_level("WARNING", logger="shardy_convert.wrapper"):
        assert session.compile(program, b"mlir", options) == (program, b"mlir", options, b"")
    assert "KeyError: 'no such key' (at " in caplog.text
    assert (session.counters.passed_through, session.counters.internal_errors) == (1, 1)
    session = wrapper.Session()
    with pytest.raises(ShardyConvertError, match="internal error: KeyError"):
        session.compile(program, b"mlir", options)
    assert (session.counters.failed, session.counters.internal_errors) == (1, 1)


def _plugin_wrapper_cli(plugin):
    from click.testing import CliRunner

    from shardy_convert.cli.main import main

    return CliRunner().invoke(main, ["plugin-wrapper", str(plugin)])


def test_the_cli_refuses_a_file_that_is_not_a_shared_library(tmp_path):
    module = tmp_path / "model.mlir"
    module.write_text("module {}\n")
    result = _plugin_wrapper_cli(module)
    assert result.exit_code == 2, result.output
    assert "not a shared library (no ELF header)" in result.output
    assert "SHARDY_CONVERT_PLUGIN" not in result.output


def test_the_cli_refuses_a_shared_library_without_the_pjrt_entry_point():
    from pathlib import Path

    numpy_dir = Path(np.__file__).parent
    library = next(numpy_dir.glob("*core/_multiarray_umath*.so"))
    result = _plugin_wrapper_cli(library)
    assert result.exit_code == 2, result.output
    assert "does not export GetPjrtApi (not a PJRT plugin)" in result.output


def test_the_cli_refuses_a_truncated_library_without_a_traceback(tmp_path):
    truncated = tmp_path / "plugin.so"
    with open(pjrt_plugin.plugin_path(), "rb") as f:
        truncated.write_bytes(f.read(200))
    result = _plugin_wrapper_cli(truncated)
    assert result.exit_code == 2, result.output
    assert "truncated or malformed ELF file" in result.output
    assert "Traceback" not in result.output


def test_the_wrapper_library_is_no_plugin_to_wrap_by_its_headers(tmp_path):
    """It exports GetPjrtApi, but also its marker: wrapping itself it would load itself
    forever (issue 19: accepted, then a hang). Another copy of it is refused the same way."""
    from shardy_convert.plugin.plugin_library import why_not_a_plugin

    copy = tmp_path / "libsomething.so"
    copy.write_bytes(Path(wrapper.library_path()).read_bytes())
    for library in (wrapper.library_path(), copy):
        reason = why_not_a_plugin(str(library))
        assert reason.startswith("shardy-convert's own PJRT plugin wrapper (it exports "), reason
    assert why_not_a_plugin(pjrt_plugin.plugin_path()) is None


def test_the_cli_refuses_the_wrapper_as_the_plugin():
    result = _plugin_wrapper_cli(wrapper.library_path())
    assert result.exit_code == 2, result.output
    assert "shardy-convert's own PJRT plugin wrapper" in result.output
    assert "SHARDY_CONVERT_PLUGIN" not in result.output


@pytest.mark.parametrize("as_copy", [False, True], ids=["itself", "a copy"])
def test_the_wrapper_given_itself_to_wrap_answers_with_an_error_never_hangs(tmp_path, as_copy):
    """Loaded as a plugin with SHARDY_CONVERT_PLUGIN naming itself (or another build of it),
    the wrapper refuses it: every call is a PJRT error saying why, and stderr says it once.
    Before, GetPjrtApi dlopened itself and called its own GetPjrtApi inside pthread_once:
    a process that never ended (hence the timeout)."""
    itself = wrapper.library_path()
    if as_copy:
        itself = str(tmp_path / "libcopy.so")
        Path(itself).write_bytes(Path(wrapper.library_path()).read_bytes())
    out = run_client({"SHARDY_CONVERT_PLUGIN": itself}, timeout=60)
    assert "ERROR" in out
    assert f"SHARDY_CONVERT_PLUGIN={itself} is shardy-convert's PJRT plugin wrapper" in out


def test_use_plugin_judges_the_plugin_by_its_headers_and_never_loads_it(tmp_path, monkeypatch):
    """Before torch_xla is imported: a bad plugin is a usage error, found without running the
    library's code (ctypes would)."""
    import ctypes
    from pathlib import Path

    from shardy_convert.errors import UsageError
    from shardy_convert.torch_xla import use_plugin

    def no_loading(*args, **kwargs):
        raise AssertionError("the plugin was loaded")

    monkeypatch.setattr(ctypes, "CDLL", no_loading)
    module = tmp_path / "model.mlir"
    module.write_text("module {}\n")
    with pytest.raises(UsageError, match=r"no PJRT plugin: not a shared library \(no ELF"):
        use_plugin(module)
    library = next(Path(np.__file__).parent.glob("*core/_multiarray_umath*.so"))
    with pytest.raises(UsageError, match="does not export GetPjrtApi"):
        use_plugin(library)
    with pytest.raises(UsageError, match="does not exist"):
        use_plugin(tmp_path / "missing.so")
    with pytest.raises(UsageError, match="it is a directory"):
        use_plugin(tmp_path)
    with pytest.raises(UsageError, match="shardy-convert's own PJRT plugin wrapper"):
        use_plugin(wrapper.library_path())
    with pytest.raises(ValueError, match='name must not be "CPU"'):  # a ValueError too
        use_plugin(library, device_type="cpu")
