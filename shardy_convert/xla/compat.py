"""Every name of jaxlib and jax that is not public JAX API, in one place, each with the releases
it was checked on. Nothing else in the package imports `jaxlib.xla_client`, `jaxlib._jax`,
`jaxlib._hlo` or `jax._src` (tests/test_tree.py checks); a release that moves one of these
fails here, in one module. Differences are detected by feature (an attribute, a signature),
never by version string, so a release in between gets whichever form it has.

Checked on jax/jaxlib 0.7.1 (what torch-xla[pallas]==2.9.0 pins; `make test-oldest`) and
0.10.2 (`make install`):

- `xla_client.CompileOptions` (`ParseFromString`, `executable_build_options` and its
  `debug_options`), `xla_client.DeviceAssignment.create`: compile options. 0.7.1, 0.10.2.
- `xla_client.make_cpu_client(num_devices=)`: a CPU client of N devices that does not read
  `XLA_FLAGS`. 0.7.1, 0.10.2.
- `xla_client.DeviceList`, `Client.compile_and_load(program, devices, options)`: compiling.
  0.7.1, 0.10.2.
- `LoadedExecutable`: `get_parameter_shardings` / `get_output_shardings` (OpSharding protos;
  None for a one-device program), `hlo_modules`, `get_compiled_memory_stats`, `cost_analysis`
  (a dict on both; a list of dicts on older jaxlibs), `execute_sharded`. 0.7.1, 0.10.2.
- `xla_client.HloSharding` (`from_proto`, `replicate`): compiled shardings. 0.7.1, 0.10.2;
  `HloSharding.is_unreduced` 0.10.2 only.
- `xla_client.GSPMDSharding` (what `jax._src.sharding_impls.GSPMDSharding` names): a jax array
  placed by an HloSharding. 0.7.1, 0.10.2.
- `_jax.mlir.serialize_portable_artifact`, `hlo_to_stablehlo`, `mhlo_to_stablehlo`. 0.7.1,
  0.10.2. `_jax.mlir.deserialize_portable_artifact(data, context=)` 0.10.2; 0.7.1 takes no
  `context=` and returns MLIR text.
- `hlo_module_from_text`, `HloSharding`, `OpSharding`: in `jaxlib._hlo` on 0.10.2, in
  `jaxlib._jax` on 0.7.1. `HloModule.from_serialized_hlo_module_proto`: in `xla_client.hlo` on
  0.10.2, in `jaxlib._jax` on 0.7.1.
- `jaxlib.__version__`: a key of the caches of XLA's choices. 0.7.1, 0.10.2.

Public JAX API beside these (xla/execute.py): `jax.device_put`,
`jax.make_array_from_single_device_arrays`, and 64-bit types for one call:
`jax.enable_x64(True)` (0.10.2), `jax.experimental.enable_x64()` (0.7.1). Not used:
`jax.extend.backend.get_compile_options` (public in both) reads jax's own configuration
(`jax_use_shardy_partitioner`, ...), so the options would follow the caller's jax settings;
the options here are torch_xla's, set field by field (xla/options.py).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any


def xla_client() -> ModuleType:
    """`jaxlib.xla_client`: compile options, devices, clients, shardings (see the table)."""
    return importlib.import_module("jaxlib.xla_client")


def jax_extension() -> ModuleType:
    """`jaxlib._jax`, jaxlib's extension module (portable artifacts, XLA's HLO importer).
    Importing it takes ~0.2 s: the plugin path does so up front (`plugin/torch_xla/use.py`)."""
    return importlib.import_module("jaxlib._jax")


@functools.cache
def jaxlib_version() -> str:
    import jaxlib

    return jaxlib.__version__


def make_cpu_client(num_devices: int) -> Any:
    """A CPU client of `num_devices` devices of its own: it reads no `XLA_FLAGS`, so it works
    in a process whose jax backend or torch_xla runtime already started with another count."""
    return xla_client().make_cpu_client(num_devices=num_devices)


def new_compile_options(proto: bytes | None = None) -> Any:
    """`CompileOptions`, empty or parsed from a serialized CompileOptionsProto."""
    options = xla_client().CompileOptions
    return options.ParseFromString(proto) if proto else options()


def device_assignment(devices: Any) -> Any:
    """A `DeviceAssignment` of a (replicas, partitions) array of device ids."""
    return xla_client().DeviceAssignment.create(devices)


def device_list(devices: tuple) -> Any:
    return xla_client().DeviceList(tuple(devices))


def sharding_from_proto(proto: Any) -> Any:
    """XLA's `HloSharding` of an OpSharding (what compiled programs hand out)."""
    return xla_client().HloSharding.from_proto(proto)


def replicated_sharding() -> Any:
    return xla_client().HloSharding.replicate()


def gspmd_sharding(devices: tuple, sharding: Any) -> Any:
    """A jax `Sharding` placing an array on `devices` as XLA's `HloSharding` says."""
    return xla_client().GSPMDSharding(tuple(devices), sharding)


@contextlib.contextmanager
def x64() -> Iterator[None]:
    """64-bit types in jax inside the block only (torch_xla graphs take f64 scalars; without
    x64 jax would silently make them f32), never left on for the rest of the process."""
    import jax

    if hasattr(jax, "enable_x64"):  # 0.10.2: a config state, a context manager when called
        scope = jax.enable_x64(True)
    else:  # 0.7.1
        from jax.experimental import enable_x64  # type: ignore[attr-defined]  # gone after 0.7.1

        scope = enable_x64()
    with scope:
        yield


def hlo_sharding_module() -> ModuleType:
    """The extension module that defines XLA's `HloSharding` and `OpSharding` bindings and its
    HLO text parser (`jaxlib._hlo`; `jaxlib._jax` before that split), without importing
    `xla_client`."""
    try:
        return importlib.import_module("jaxlib._hlo")
    except ImportError:
        return jax_extension()


def xla_reads_every_named_sharding() -> bool:
    """Whether this jaxlib's XLA reads every named (V3) sharding of HLO text and protos:
    jaxlib 0.12 does (`HloSharding.reduction_op`); 0.10.2 reads V3 but neither reduction
    kinds nor `single_device[...]`, and drops a proto's reduction; 0.7.1 reads no V3 text and
    reads a proto's named sharding as replicated."""
    return hasattr(hlo_sharding_module().HloSharding, "reduction_op")


def hlo_module_from_proto(data: bytes) -> Any:
    """jaxlib's `HloModule` from a serialized `HloModuleProto`."""
    hlo = getattr(xla_client(), "hlo", None)
    if hlo is not None:
        return hlo.HloModule.from_serialized_hlo_module_proto(data)
    return jax_extension().HloModule.from_serialized_hlo_module_proto(data)


def hlo_text_to_proto(text: str) -> bytes:
    """XLA's own HLO text parser (`hlo_module_from_text`): the module as a serialized
    HloModuleProto (its config, `num_partitions=...` of the header, is not part of it).
    Raises what jaxlib raises on text it cannot parse."""
    parsed = hlo_sharding_module().hlo_module_from_text(text)
    return bytes(parsed.as_serialized_hlo_module_proto())


def hlo_to_stablehlo(proto: bytes) -> bytes:
    """XLA's importer (`hlo_to_stablehlo`): MLIR bytecode of a serialized HloModuleProto,
    StableHLO but for the HLO ops StableHLO has no op for, which it leaves in the mhlo dialect
    (torch_xla's GELU: `mhlo.erf`; see `mhlo_to_stablehlo`). Raises what jaxlib raises."""
    return bytes(jax_extension().mlir.hlo_to_stablehlo(proto))


def mhlo_to_stablehlo(bytecode: bytes) -> bytes:
    """`mhlo_to_stablehlo`: StableHLO bytecode of MLIR bytecode in which mhlo ops are left.
    Each becomes XLA's encoding of it, `stablehlo.custom_call @mhlo.erf {mhlo.attributes =
    {...}, mhlo.version = 1}`, which XLA's StableHLO reader turns back into the HLO op; a module
    without mhlo comes back as it was. Raises what jaxlib raises."""
    return bytes(jax_extension().mlir.mhlo_to_stablehlo(bytecode))


def serialize_portable_artifact(module: str | bytes, target: str) -> bytes:
    """`module` (MLIR text or bytecode) as a portable artifact for StableHLO `target`. A
    target newer than this jaxlib writes must be refused before (`formats.check_version`):
    jaxlib would silently write its own newest version instead."""
    return bytes(jax_extension().mlir.serialize_portable_artifact(module, target))


def deserialize_portable_artifact(data: bytes, context: Any) -> Any:
    """A StableHLO portable artifact read by jaxlib: a module in `context` (an MLIR context,
    passed through untouched), or, where jaxlib takes no context (0.7.1), the module as MLIR
    text with its locations, for the caller to parse. Raises what jaxlib raises (an MLIR
    error, or its own error type on bytes that are no artifact)."""
    read = jax_extension().mlir.deserialize_portable_artifact
    if "context" in _signature(read):
        return read(data, context=context)
    return read(data)


@functools.cache
def _signature(fn: Any) -> str:
    """The first line of a nanobind function's docstring (its signature)."""
    return (getattr(fn, "__doc__", None) or "").strip().split("\n")[0]
