"""jaxlib's CPU PJRT client with N virtual devices: compile a module, run it on inputs.

The client reads `XLA_FLAGS=--xla_force_host_platform_device_count=N` once, when it starts:
`ensure_devices(N)` sets it (to the largest count a batch needs, before the first compile)
and fails if the client already started with fewer. XLA's C++ logging (the device list, the
GSPMD deprecation notice) goes to file descriptor 2, under Python: `quiet()` keeps it off
the terminal while the client starts, compiles and runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...errors import ShardyConvertError, plural
from ...ir.legacy_i1 import i1_hex_for_parser
from ...ir.mlir import cpp_stderr
from .cost import REMATERIALIZATION, Cost, program_cost
from .signature import Signature, main_signature

_DEVICE_FLAG = re.compile(r"--xla_force_host_platform_device_count=(\d+)")


def ensure_devices(n: int) -> None:
    """Makes the CPU client have at least `n` devices (only possible before it starts)."""
    flags = os.environ.get("XLA_FLAGS", "")
    m = _DEVICE_FLAG.search(flags)
    if m and int(m.group(1)) >= n:
        return
    if "jax._src.xla_bridge" in sys.modules:
        from jax._src import xla_bridge

        if xla_bridge.backends_are_initialized() and len(_backend().devices()) < n:
            raise ShardyConvertError(
                f"needs {plural(n, 'device')}, but the CPU client already started with "
                f"{len(_backend().devices())}"
            )
    flags = _DEVICE_FLAG.sub("", flags)
    os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={n}".strip()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """XLA's C++ logging (file descriptor 2, whatever `TF_CPP_MIN_LOG_LEVEL` says at the
    time) is dropped inside."""
    with cpp_stderr():
        yield


def _backend():
    from jax._src import xla_bridge

    with quiet():
        return xla_bridge.get_backend("cpu")


@dataclass
class Compiled:
    """One compiled program: its executable, the shardings XLA chose, and what XLA wrote to
    file descriptor 2 while compiling it (`log`)."""

    executable: object
    parameters: list
    outputs: list
    devices: list
    signature: Signature
    log: str | None = None

    @cached_property
    def cost(self) -> Cost:
        """Its collectives, memory, FLOPs and rematerializations (see `cost`; unknown where
        this XLA does not write its rematerialization warning where we read it)."""
        return program_cost(self.executable, self.log if rematerializations_logged() else None)


# A reshard XLA's partitioner can only do by replicating the tensor first (measured on jaxlib
# 0.10.2: one "Involuntary full rematerialization" warning, GSPMD and Shardy alike).
PROBE_DEVICES = 4
_REMAT_PROBE = (
    'func.func @main(%arg0: tensor<6x8x8xf32> {mhlo.sharding = "{devices=[1,1,4]<=[4]}"}) -> '
    "tensor<6x8x8xf32> {\n"
    '  %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[2,1,1,2]<=[4] '
    'last_tile_dim_replicate}"} : (tensor<6x8x8xf32>) -> tensor<6x8x8xf32>\n'
    "  return %0 : tensor<6x8x8xf32>\n}\n"
)


@functools.cache
def rematerializations_logged() -> bool:
    """Whether this XLA writes its involuntary-rematerialization warning to file descriptor 2
    (jaxlib 0.10.2 does, at WARNING level, which `TF_CPP_MIN_LOG_LEVEL=2` hides; 0.7.1 does
    not): found by compiling a program that needs one. False on fewer than 4 devices."""
    if len(_backend().devices()) < PROBE_DEVICES:
        return False
    probe = compile_module(_REMAT_PROBE, PROBE_DEVICES, shardy=False)
    return REMATERIALIZATION in (probe.log or "")


def compile_options(n: int, *, shardy: bool):
    """jaxlib's `CompileOptions` as torch_xla compiles a program of `n` partitions on devices
    0..n-1, with the chosen partitioner."""
    from jax._src.lib import xla_client as xc

    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_partitions = n
    build.num_replicas = 1
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = shardy
    # As torch_xla (and jax.jit for unspecified out_shardings) compile: an output the module
    # leaves unannotated gets the partitioner's propagated sharding, not replicated. The
    # conversion leaves those outputs open for Shardy likewise (allow_..._to_output=True).
    build.allow_spmd_sharding_propagation_to_output = [True]
    build.device_assignment = xc.DeviceAssignment.create(np.arange(n).reshape(1, n))
    return options


def compile_module(text: str | bytes, n: int, *, shardy: bool) -> Compiled:
    """Compiles on the CPU client with `n` partitions and the chosen partitioner."""
    from jax._src.lib import xla_client as xc

    signature = main_signature(text)
    ensure_devices(n)
    if isinstance(text, str):  # XLA's parser is jaxlib's MLIR too (see legacy_i1)
        text = i1_hex_for_parser(text)
    backend = _backend()
    devices = backend.devices()[:n]
    try:
        with cpp_stderr() as log:  # XLA's warnings, among them its rematerializations
            exe = backend.compile_and_load(
                text, xc.DeviceList(tuple(devices)), compile_options(n, shardy=shardy)
            )
    except Exception as e:  # XlaRuntimeError: report which side failed
        side = "Shardy result" if shardy else "GSPMD original"
        raise ShardyConvertError(f"the {side} does not compile: {e}") from None
    parameters = _shardings(exe.get_parameter_shardings(), len(signature.args))
    outputs = _shardings(exe.get_output_shardings(), len(signature.results))
    return Compiled(exe, parameters, outputs, devices, signature, "".join(log))


def _shardings(protos: list | None, count: int) -> list:
    """XLA's shardings; a one-device program has none (None): every value is replicated."""
    from jax._src.lib import xla_client as xc

    if protos is None:
        return [xc.HloSharding.replicate()] * count
    return [xc.HloSharding.from_proto(p) for p in protos]


def execute(compiled: Compiled, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Runs the program: each input placed by its parameter sharding, each output assembled
    from its shards into one global array."""
    import jax
    from jax._src.sharding_impls import GSPMDSharding

    # torch_xla graphs take f64 scalars; without x64 jax would silently make them f32.
    jax.config.update("jax_enable_x64", True)
    with quiet():
        args = [
            jax.device_put(value, GSPMDSharding(compiled.devices, sharding))
            for value, sharding in zip(inputs, compiled.parameters)
        ]
        outs = compiled.executable.execute_sharded(args).disassemble_into_single_device_arrays()
        values = []
        for arrays, sharding, (shape, _) in zip(outs, compiled.outputs, compiled.signature.results):
            arr = jax.make_array_from_single_device_arrays(
                shape, GSPMDSharding(compiled.devices, sharding), arrays
            )
            values.append(np.asarray(arr))
    return values
