"""Compile and run modules through a genuine PJRT C-API plugin.

The plugin is OpenXLA's CPU plugin as shipped on PyPI (`xla-cpu-pjrt`, a `GetPjrtApi` .so),
driven by `pypjrt` (PyPI), a pure-Python client of the PJRT C API. That is the path a PJRT
plugin (tt-xla and others) is reached by: a StableHLO module, MLIR text or a portable
artifact, plus a serialized `CompileOptionsProto` — not jaxlib's in-process client.

    client = get_client(8)                       # one client per process, cached
    exe = client.compile(text, 8, shardy=True)   # or shardy=False for a GSPMD module
    exe.parameter_shardings                      # what the partitioner chose, per argument
    outputs = client.run(exe, [x, y])            # global numpy arrays in and out

What pypjrt 0.1.1 offers against this plugin (PJRT C API 0.81): compile (text or bytecode,
always with format "mlir"), host buffers per device, `execute_sharded`, read-back. It has no
call for parameter/output shardings (the plugin advertises no Shardings extension), so they
are read from the plugin's optimized program (`PJRT_Executable_OptimizedProgram`, an
`HloModuleProtoWithConfig`), whose `spmd_parameters_shardings`/`spmd_output_sharding` are the
same shardings a PJRT client's `GetParameterShardings` reports. Decoding the proto uses
jaxlib's HloModule bindings.

`run` places each argument by its compiled sharding: partition p receives the block of the
global array at p's position in the tile assignment (replicated arguments: the whole array
on every partition); outputs are reassembled the same way. Partition p runs on the device
the executable's device assignment gives it.

pypjrt is imported lazily: importing this module costs nothing.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from shardy_convert.errors import ShardyConvertError
from shardy_convert.plugin.plugin_library import cpu_plugin_path as plugin_path
from shardy_convert.xla import compat

#: Devices of the one client made per process unless the first caller asks for more; a
#: program compiled for N partitions runs on devices 0..N-1 of it.
DEFAULT_DEVICES = 16

# OpSharding.Type values (xla_data.proto).
_REPLICATED, _MAXIMAL, _TUPLE, _OTHER, _MANUAL = 0, 1, 2, 3, 4


def _pypjrt():
    try:
        import pypjrt
    except ImportError:
        raise ShardyConvertError(
            "the PJRT C-API client is not installed: pip install pypjrt"
        ) from None
    return pypjrt


# --------------------------------------------------------------------------------------------
# Shardings


@dataclass(frozen=True)
class Sharding:
    """A compiled sharding of one array, as the plugin reports it.

    kind: "replicated", "maximal", "tiled" or "manual". For "tiled", `tiles` is the tile
    assignment (partition ids) with the array's dims first and then `subgroups` trailing
    dims (replicated/manual groups); for "maximal", `device` is the partition holding it.
    """

    kind: str
    text: str
    tiles: np.ndarray | None = field(default=None, compare=False, repr=False)
    subgroups: int = 0
    device: int | None = None

    def __str__(self) -> str:
        return self.text

    def blocks(self, shape: tuple[int, ...], num_partitions: int) -> list[tuple[slice, ...]]:
        """The block of a global array of `shape` that each partition holds (XLA's tiling:
        ceil-sized tiles, the last ones short or empty)."""
        whole = tuple(slice(0, d) for d in shape)
        if self.kind != "tiled" or self.tiles is None:
            return [whole] * num_partitions
        data = self.tiles.shape[: self.tiles.ndim - self.subgroups]
        if len(data) != len(shape):
            raise ShardyConvertError(f"sharding {self.text} does not fit an array of {shape}")
        sizes = [-(-d // t) for d, t in zip(shape, data)]
        out: list[tuple[slice, ...] | None] = [None] * num_partitions
        for index, partition in np.ndenumerate(self.tiles):
            out[int(partition)] = tuple(
                slice(min(i * s, d), min((i + 1) * s, d))
                for i, s, d in zip(index[: len(data)], sizes, shape)
            )
        return [whole if b is None else b for b in out]

    def global_shape(self, local: tuple[int, ...]) -> tuple[int, ...]:
        """The global shape of an even sharding whose shards have shape `local`."""
        if self.kind != "tiled" or self.tiles is None:
            return local
        data = self.tiles.shape[: self.tiles.ndim - self.subgroups]
        return tuple(d * t for d, t in zip(local, data))


REPLICATED = Sharding("replicated", "{replicated}")


def sharding_from_proto(proto: Any) -> Sharding:
    """A `Sharding` from an `xla.OpSharding` (jaxlib's binding) that XLA itself produced."""
    from jaxlib import xla_client as xc

    text = str(xc.HloSharding.from_proto(proto))
    kind = int(proto.type.value) if hasattr(proto.type, "value") else int(proto.type)
    if kind == _MAXIMAL:
        return Sharding("maximal", text, device=int(proto.tile_assignment_devices[0]))
    if kind == _MANUAL:
        return Sharding("manual", text)
    if kind != _OTHER:
        return Sharding("replicated", text)
    dims = tuple(int(d) for d in proto.tile_assignment_dimensions)
    if proto.iota_reshape_dims:
        reshape = tuple(int(d) for d in proto.iota_reshape_dims)
        perm = tuple(int(p) for p in proto.iota_transpose_perm)
        tiles = np.arange(int(np.prod(reshape))).reshape(reshape).transpose(perm).reshape(dims)
    else:
        tiles = np.array([int(d) for d in proto.tile_assignment_devices]).reshape(dims)
    subgroups = len(proto.last_tile_dims) or (1 if proto.replicate_on_last_tile_dim else 0)
    return Sharding("tiled", text, tiles, subgroups)


def _output_shardings(proto: Any, count: int) -> list[Sharding]:
    kind = int(proto.type.value) if hasattr(proto.type, "value") else int(proto.type)
    if kind == _TUPLE:
        return [sharding_from_proto(p) for p in proto.tuple_shardings]
    return [sharding_from_proto(proto)] * count


# --------------------------------------------------------------------------------------------
# Minimal protobuf reading (the plugin's answers are protos; no protobuf package needed)


def _proto_fields(data: bytes) -> list[tuple[int, int | bytes]]:
    """Top-level (field number, value) pairs of a serialized proto: varints and
    length-delimited values; fixed32/64 are returned as raw bytes."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while pos < len(data):
        tag = varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            out.append((number, varint()))
        elif wire == 2:
            size = varint()
            out.append((number, data[pos : pos + size]))
            pos += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            out.append((number, data[pos : pos + width]))
            pos += width
        else:
            raise ShardyConvertError(f"unexpected protobuf wire type {wire} from the plugin")
    return out


def _partition_devices(device_assignment: bytes) -> list[int]:
    """Device id of each partition, from a serialized `xla.DeviceAssignmentProto`
    (computation_devices = 3, each with replica_device_ids = 1; one replica)."""
    devices = []
    for number, value in _proto_fields(device_assignment):
        if number == 3 and isinstance(value, bytes):
            ids = [v for n, v in _proto_fields(value) if n == 1]
            if len(ids) == 1 and isinstance(ids[0], bytes):  # packed
                ids = [v for _, v in _proto_fields(b"\x08" + ids[0])]
            devices.append(int(ids[0]))
    return devices


# --------------------------------------------------------------------------------------------
# Client and executables


@dataclass
class Executable:
    """One program compiled by the plugin, with the shardings its partitioner chose."""

    handle: Any  # pypjrt.Executable
    num_partitions: int
    shardy: bool
    parameter_shardings: list[Sharding]
    output_shardings: list[Sharding]
    #: Device id of each launch slot, and the partition that slot runs.
    launch_devices: list[int]
    launch_partitions: list[int]
    #: The optimized (partitioned) HLO, for debugging.
    hlo_text: str = ""

    @property
    def num_outputs(self) -> int:
        return int(self.handle.num_outputs)


class PluginClient:
    """A pypjrt client of the xla-cpu-pjrt plugin with `num_devices` CPU devices.

    Use `get_client()`: it keeps one client per process. The device count of a client is
    fixed when it is created; programs for fewer partitions use its first devices.
    """

    def __init__(self, num_devices: int = DEFAULT_DEVICES):
        pypjrt = _pypjrt()
        self._pypjrt = pypjrt
        self.path = plugin_path()
        try:
            self.client = pypjrt.Client.create(
                self.path, options={"cpu_device_count": int(num_devices)}
            )
        except pypjrt.errors.PjrtError as e:
            raise ShardyConvertError(f"cannot create a client of {self.path}: {e}") from None
        self.num_devices = int(self.client.device_count)
        if self.num_devices < num_devices:
            raise ShardyConvertError(
                f"the plugin made {self.num_devices} devices, {num_devices} were asked for"
            )

    # -- facts about the plugin ------------------------------------------------------------

    @property
    def platform(self) -> str:
        return str(self.client.platform_name)

    @property
    def stablehlo_versions(self) -> tuple[str, str] | None:
        """(minimum, current) StableHLO versions the plugin reads, if it says."""
        found = self.client._plugin.stablehlo_version_range
        if found is None:
            return None
        low, high = found
        return ".".join(map(str, low)), ".".join(map(str, high))

    def portable_target(self) -> str:
        """The StableHLO version to serialize portable artifacts to for this plugin: the
        newest one both the plugin and jaxlib know (the plugin's current version, capped by
        jaxlib's)."""
        from jaxlib.mlir.dialects import stablehlo

        ours = stablehlo.get_current_version()
        theirs = self.stablehlo_versions
        if theirs is None:
            return ours
        return min(ours, theirs[1], key=_version_key)

    def portable_artifact(self, module: str, target: str | None = None) -> bytes:
        """`module` (MLIR text) as a StableHLO portable artifact for this plugin."""
        return portable_artifact(module, target or self.portable_target())

    # -- compile and run -------------------------------------------------------------------

    def compile(
        self,
        module: str | bytes,
        num_devices: int,
        *,
        shardy: bool,
        propagate_to_output: bool = False,
    ) -> Executable:
        """Compiles `module` (MLIR text, or bytecode such as a portable artifact) for
        `num_devices` partitions with SPMD partitioning, Shardy's partitioner if `shardy`
        else GSPMD's; `propagate_to_output` as torch_xla compiles (an unannotated output gets
        the partitioner's sharding, not replicated). ShardyConvertError carries the plugin's
        message on failure."""
        pypjrt = self._pypjrt
        if num_devices > self.num_devices:
            raise ShardyConvertError(
                f"the plugin client has {self.num_devices} devices, the module needs {num_devices}"
            )
        options = pypjrt.CompileOptions(
            num_replicas=1,
            num_partitions=num_devices,
            use_spmd_partitioning=True,
            use_shardy_partitioner=shardy,
        )
        if propagate_to_output:
            options.allow_spmd_sharding_propagation_to_output = [True]
        try:
            handle = self.client.compile(module, options=options)
        except pypjrt.errors.PjrtError as e:
            side = "Shardy" if shardy else "GSPMD"
            raise ShardyConvertError(
                f"the PJRT plugin rejected the module ({side} partitioner, {num_devices} "
                f"partitions): {e}"
            ) from None
        return self._describe(handle, num_devices, shardy)

    def _describe(self, handle: Any, num_devices: int, shardy: bool) -> Executable:
        pypjrt = self._pypjrt
        module = self._optimized_module(handle)
        count = int(handle.num_outputs)
        # Both are None for a program that was not partitioned (one partition).
        params = [sharding_from_proto(p) for p in module.spmd_parameters_shardings or ()]
        if module.spmd_output_sharding is None:
            outputs = [REPLICATED] * count
        else:
            outputs = _output_shardings(module.spmd_output_sharding, count)
        launch = [pypjrt.Device(handle._plugin, p).id for p in handle.addressable_devices()]
        partition_of = {
            d: k for k, d in enumerate(_partition_devices(handle.device_assignment_proto()))
        }
        return Executable(
            handle=handle,
            num_partitions=num_devices,
            shardy=shardy,
            parameter_shardings=params,
            output_shardings=outputs,
            launch_devices=launch,
            launch_partitions=[partition_of.get(d, k) for k, d in enumerate(launch)],
            hlo_text=module.to_string(),
        )

    def _optimized_module(self, handle: Any):
        """The compiled program as jaxlib's HloModule (`PJRT_Executable_OptimizedProgram`)."""
        plugin = handle._plugin
        program = plugin.args("PJRT_Program")
        args = plugin.args(
            "PJRT_Executable_OptimizedProgram_Args",
            executable=handle._executable(),
            program=ctypes.addressof(program),
        )
        plugin.call("PJRT_Executable_OptimizedProgram", args)  # asks for the size
        code = ctypes.create_string_buffer(max(int(program.code_size), 1))
        program.code = ctypes.cast(code, ctypes.c_void_p)
        plugin.call("PJRT_Executable_OptimizedProgram", args)
        data = code.raw[: int(program.code_size)]
        form = ctypes.string_at(program.format, program.format_size).decode()
        if form == "hlo_with_config":  # HloModuleProtoWithConfig: hlo_module = 1
            data = next(v for n, v in _proto_fields(data) if n == 1 and isinstance(v, bytes))
        elif form != "hlo":
            raise ShardyConvertError(f"the plugin's optimized program has format {form!r}")
        return compat.hlo_module_from_proto(data)

    def run(
        self,
        executable: Executable,
        inputs: list[np.ndarray],
        *,
        output_shapes: list[tuple[int, ...]] | None = None,
    ) -> list[np.ndarray]:
        """Runs `executable` on global arrays `inputs`; returns the global outputs.

        Each input is cut into the blocks its compiled parameter sharding gives every
        partition and transferred to that partition's device; outputs are read back from
        every device and reassembled by the output shardings. `output_shapes` trims outputs
        of uneven shardings to their global shapes (default: shard shape times tiles).
        """
        params = executable.parameter_shardings
        if params and len(params) != len(inputs):
            raise ShardyConvertError(
                f"the program takes {len(params)} arguments, not {len(inputs)}"
            )
        params = params or [REPLICATED] * len(inputs)
        n = executable.num_partitions
        arrays = [np.asarray(x) for x in inputs]
        blocks = [s.blocks(a.shape, n) for s, a in zip(params, arrays)]
        with self.client.devices() as devices:
            by_id = {d.id: d for d in devices}
            arguments = [
                [self._buffer(a[b[p]], by_id[d]) for a, b in zip(arrays, blocks)]
                for d, p in zip(executable.launch_devices, executable.launch_partitions)
            ]
            try:
                results = executable.handle.execute_sharded(arguments)
            except self._pypjrt.errors.PjrtError as e:
                raise ShardyConvertError(
                    f"the PJRT plugin failed to run the program: {e}"
                ) from None
            finally:
                for row in arguments:
                    for buffer in row:
                        buffer.close()
            shards = [[_to_numpy(b) for b in row] for row in results]
            for row in results:
                for buffer in row:
                    buffer.close()
        by_partition = dict(zip(executable.launch_partitions, shards))
        outputs = []
        for k, sharding in enumerate(executable.output_shardings):
            per_partition = [by_partition[p][k] for p in range(n)]
            shape = output_shapes[k] if output_shapes else None
            outputs.append(_assemble(sharding, per_partition, shape))
        return outputs

    def _buffer(self, block: np.ndarray, device: Any):
        data = np.ascontiguousarray(block)
        return self.client.buffer_from_host(data, _pjrt_type(data.dtype), data.shape, device)


def _assemble(sharding: Sharding, shards: list[np.ndarray], shape) -> np.ndarray:
    if sharding.kind == "maximal" and sharding.device is not None:
        return shards[sharding.device]
    if sharding.kind != "tiled":
        return shards[0]
    shape = tuple(shape) if shape is not None else sharding.global_shape(shards[0].shape)
    out = np.zeros(shape, dtype=shards[0].dtype)
    for block, shard in zip(sharding.blocks(shape, len(shards)), shards):
        out[block] = shard[tuple(slice(0, b.stop - b.start) for b in block)]
    return out


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# --------------------------------------------------------------------------------------------
# dtypes

_NUMPY_TO_PJRT = {
    "bool": "PRED", "int8": "S8", "int16": "S16", "int32": "S32", "int64": "S64",
    "uint8": "U8", "uint16": "U16", "uint32": "U32", "uint64": "U64",
    "float16": "F16", "float32": "F32", "float64": "F64", "bfloat16": "BF16",
}  # fmt: skip


def _pjrt_type(dtype: np.dtype) -> int:
    from pypjrt import typing

    name = _NUMPY_TO_PJRT.get(np.dtype(dtype).name)
    if name is None:
        raise ShardyConvertError(f"the PJRT plugin client cannot transfer {dtype} arrays")
    return int(getattr(typing, name).code)


def _numpy_type(code: int) -> np.dtype:
    from pypjrt import typing

    for name, pjrt in _NUMPY_TO_PJRT.items():
        if int(getattr(typing, pjrt).code) == code:
            if name == "bfloat16":
                import ml_dtypes

                return np.dtype(ml_dtypes.bfloat16)
            return np.dtype(name)
    raise ShardyConvertError(f"the PJRT plugin returned a buffer of unknown type {code}")


def _to_numpy(buffer: Any) -> np.ndarray:
    out = np.empty(tuple(buffer.dimensions), dtype=_numpy_type(buffer.element_type))
    if out.size:
        buffer.to_host(out)
    return out


# --------------------------------------------------------------------------------------------
# Process-wide client and shortcuts

_client: PluginClient | None = None
_lock = threading.Lock()


def get_client(num_devices: int = DEFAULT_DEVICES) -> PluginClient:
    """The process's one plugin client, made on first use with max(num_devices,
    DEFAULT_DEVICES) devices. ShardyConvertError if it exists with fewer devices."""
    global _client
    with _lock:
        if _client is None:
            _client = PluginClient(max(num_devices, DEFAULT_DEVICES))
        elif _client.num_devices < num_devices:
            raise ShardyConvertError(
                f"the PJRT plugin client of this process has {_client.num_devices} devices; "
                f"{num_devices} are needed (a client's device count is fixed)"
            )
        return _client


def compile(module: str | bytes, num_devices: int, shardy: bool) -> Executable:
    """`get_client(num_devices).compile(...)`."""
    return get_client(num_devices).compile(module, num_devices, shardy=shardy)


def run(executable: Executable, inputs: list[np.ndarray], **options) -> list[np.ndarray]:
    """`get_client().run(...)` on the process's client."""
    return get_client(executable.num_partitions).run(executable, inputs, **options)


def portable_artifact(module: str, target: str | None = None) -> bytes:
    """Serializes MLIR text to a StableHLO portable artifact (VHLO bytecode), as a PJRT
    client hands a plugin; `target` is a StableHLO version ("1.13.3"), default jaxlib's
    minimum supported one (the most portable). Shardy shardings go to their round-trip form
    (`xla.sdy.*` frontend attributes) that XLA re-imports."""
    from jaxlib.mlir.dialects import stablehlo

    target = target or stablehlo.get_minimum_version()
    try:
        return compat.serialize_portable_artifact(module, target)
    except Exception as e:  # jaxlib raises a bare ValueError/RuntimeError
        raise ShardyConvertError(f"cannot serialize a portable artifact ({target}): {e}") from None
